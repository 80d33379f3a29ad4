"""The demo pool's pictograms: 10 per topic, drawn with PIL by code (CC0-1.0).

No photographs can be downloaded where the toolkit is developed and tested, so the
package ships drawings made by code as its bundled pool (``src/mvlsib/data/image_pool``);
a real release replaces them with curated photographs (see docs/image_pool.md). This
drawer is not part of the package: ``python tools/demo_pool.py --out DIR`` redraws the
bundled pool byte for byte from a checkout.

Every picture is drawn from fixed coordinates and colours: no random generator is used,
so the same PIL version gives the same bytes on every run. Pictures are drawn at twice
the output size and downscaled, which smooths edges without relying on anti-aliased
drawing primitives. Each picture has its own background (gradient, split horizon,
solid colour, pattern) and composition so that perceptual hashes of these simple
drawings stay far apart (see the near-duplicate check in :mod:`mvlsib.image_pool.check`).
"""

from .pool import PICTOGRAMS, PNG_SAVE_OPTIONS, png_bytes, render, write_demo_pool

__all__ = ["PICTOGRAMS", "PNG_SAVE_OPTIONS", "png_bytes", "render", "write_demo_pool"]
