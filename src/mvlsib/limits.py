"""Named limits and size defaults, each written once.

Every command-line default and library default for these reads them from here, so the
help text, the library and the docs cannot drift apart.
"""

# Images: decoded pixels above this are refused before decoding (decompression bombs); far above
# any real camera photo in use.
MAX_PIXELS = 64_000_000
# Images: the shorter side a pool image must have after normalisation.
MIN_SIDE = 224
# Images: normalised pool images fit this box (never enlarged); also MTEB's thumbnail size.
IMAGE_BOX = (640, 480)
# Downloads of a source image: largest body accepted, and seconds for the whole request.
MAX_DOWNLOAD_BYTES = 25 * 1024 * 1024
# Images: the largest file of a pool or a release read (whole, to hash and decode it); a 64-megapixel
# PNG is far below it, a file beyond it is not an image of a benchmark.
MAX_IMAGE_FILE_BYTES = 256 * 1024 * 1024
DOWNLOAD_TIMEOUT_S = 30.0
# The pool: images each topic must have.
IMAGES_PER_TOPIC = 10
# The Hub: seconds any one request to it may wait for the server (connect, each read and write);
# huggingface_hub's own default is no timeout, so a Hub that never answers a commit hung publish.
HUB_TIMEOUT_S = 120.0
# Text files we parse (SIB-200 TSV, raw Flores): the longest line and the largest file read. The
# longest real SIB-200/Flores sentence is under 2 KB and the largest file under 1 MB; these refuse a
# broken or hostile file while reading it, in bounded memory, naming the file and line.
MAX_TEXT_LINE_BYTES = 1024 * 1024
MAX_TEXT_FILE_BYTES = 64 * 1024 * 1024

# The largest index_id a corpus may hold: what ingest reads (at most 9 digits; validate's schema is stricter).
MAX_INDEX_ID = 10**9 - 1
