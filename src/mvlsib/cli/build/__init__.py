"""`mvlsib-build`'s commands, one module per group: ``stages`` (ingest, sample, validate, publish,
build), ``verify`` (verify-images), ``export``, ``images`` (the pool's curation). Importing this
package registers them on ``build_cli`` (``mvlsib.cli.groups``)."""

from mvlsib.cli.build import export, images, stages, verify  # noqa: F401 - registers the commands
from mvlsib.cli.groups import build_cli

__all__ = ["build_cli"]
