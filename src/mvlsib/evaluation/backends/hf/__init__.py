"""The ``hf`` backend: a transformers model run here (``backend.HFBackend``).

One module per mechanism: ``loading`` (config, processor, weights, device, threads), ``inputs``
(rendering, placement, collation), ``batching`` (batches and their self-check), ``generation``
(greedy decoding, thinking blocks), ``feature_cache`` with ``feature_units`` (image features
once per image) and ``kv_prefix`` (a batch's shared prefix computed once). Importing the
package is light: torch and transformers load when a backend is built.
"""

from .backend import HFBackend

__all__ = ["HFBackend"]
