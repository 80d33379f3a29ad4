"""Safe decoding and normalisation of images entering the pool.

Every image in a pool is stored the same way: upright (EXIF orientation applied), RGB in
sRGB, no metadata at all (EXIF, GPS, ICC, XMP, text chunks), fitted into a bounded box,
and encoded with fixed settings so the same input always gives the same bytes.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageCms, ImageOps, UnidentifiedImageError

from mvlsib import readers
from mvlsib.errors import MvlsibError
from mvlsib.limits import IMAGE_BOX, MAX_PIXELS

DEFAULT_BOX: tuple[int, int] = IMAGE_BOX
DEFAULT_MAX_PIXELS = MAX_PIXELS
POOL_FORMATS = ("JPEG", "PNG", "WEBP")  # formats a pool file may have
INPUT_FORMATS = ("JPEG", "PNG", "WEBP", "GIF", "TIFF", "BMP", "MPO")  # formats `images add` accepts
JPEG_SAVE_OPTIONS: dict[str, Any] = {
    "format": "JPEG",
    "quality": 90,
    "subsampling": "4:2:0",
    "optimize": False,
    "progressive": False,
}
PNG_SAVE_OPTIONS: dict[str, Any] = {"format": "PNG", "optimize": False, "compress_level": 9}
EXTENSIONS = {"JPEG": ".jpg", "PNG": ".png"}


@dataclass(frozen=True)
class NormalizedImage:
    data: bytes
    format: str  # "JPEG" or "PNG"
    width: int
    height: int

    @property
    def extension(self) -> str:
        return EXTENSIONS[self.format]


def open_image(
    source: bytes | str | Path,
    *,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    what: str | None = None,
    formats: tuple[str, ...] = INPUT_FORMATS,
    draft_box: tuple[int, int] | None = None,
):
    """Open and fully decode an image, refusing bombs, unknown formats and truncated data.

    The pixel count is checked from the header before any pixel is decoded, so a
    decompression bomb costs nothing. Raises MvlsibError naming ``what`` (file or URL).
    """
    label = what or (str(source) if not isinstance(source, bytes) else "image data")
    try:
        fp = io.BytesIO(source) if isinstance(source, bytes) else readers.open_input(source)
    except OSError as exc:  # a folder, a symlink loop, no permission
        raise MvlsibError(f"{label}: cannot be read ({exc.strerror or exc})") from None
    except readers.ReadError as exc:  # a FIFO, a device
        raise MvlsibError(str(exc)) from None
    try:
        with warnings.catch_warnings():
            # Our own pixel limit applies; PIL's warning would only add noise.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            try:
                im = Image.open(fp, formats=None)
            except Image.DecompressionBombError as exc:
                raise MvlsibError(f"{label}: refused as a decompression bomb ({exc})") from None
            except UnidentifiedImageError:
                raise MvlsibError(f"{label}: not a decodable image (unknown or corrupt format)") from None
            except (ValueError, SyntaxError, OSError, EOFError) as exc:
                # e.g. an 8 MB ICC profile: a metadata chunk over Pillow's safety limit
                raise MvlsibError(
                    f"{label}: cannot be read as an image ({exc}); re-save it without "
                    "oversized metadata (ICC profile, text chunks)"
                ) from None
            if im.format not in formats:
                raise MvlsibError(f"{label}: format {im.format} is not accepted; use one of {', '.join(formats)}")
            w, h = im.size
            if w * h > max_pixels:
                raise MvlsibError(
                    f"{label}: {w}x{h} = {w * h:,} pixels exceeds the limit of {max_pixels:,} "
                    "(decompression-bomb guard); scale it down first or raise --max-pixels"
                )
            if draft_box and im.format == "JPEG" and im.mode in ("RGB", "L"):
                # Let libjpeg decode at 1/2, 1/4 or 1/8 scale when the result stays >= the box
                # (and thus >= the final size): several times faster on camera photos.
                needed = _draft_size(im.size, draft_box)
                if needed:
                    im.draft(im.mode, needed)
            try:
                im.load()
            except (OSError, SyntaxError, ValueError) as exc:
                raise MvlsibError(
                    f"{label}: cannot be decoded to the end ({exc}); the file is truncated or corrupt"
                ) from None
    finally:
        if not isinstance(source, bytes):
            fp.close()
    return im


def _draft_size(size: tuple[int, int], box: tuple[int, int]) -> tuple[int, int] | None:
    """Smallest size whose fit into ``box`` equals the full image's fit (None: no reduction)."""
    w, h = size
    scale = min(box[0] / w, box[1] / h)
    if scale >= 0.5:
        return None
    # Twice the final size keeps LANCZOS downscaling from a properly oversampled source.
    return (max(1, round(w * scale * 2)), max(1, round(h * scale * 2)))


def to_srgb_rgb(im):
    """Upright RGB pixels in sRGB: EXIF rotation, ICC conversion, alpha flattened on white."""
    im = ImageOps.exif_transpose(im)
    icc = im.info.get("icc_profile")
    if im.mode in ("I;16", "I;16L", "I;16B", "I;16N", "I"):
        # 16-bit greyscale: scale to 8 bits (a plain convert("L") clips at 255).
        im = im.convert("I").point(lambda v: v * (1 / 256)).convert("L")
    elif im.mode == "F":
        im = im.point(lambda v: v * 255).convert("L")
    if icc and im.mode in ("RGB", "CMYK", "L", "RGBA"):
        im = _icc_to_srgb(im, icc)
    if im.mode == "P":
        im = im.convert("RGBA")
    if im.mode in ("LA", "PA", "La"):
        im = im.convert("RGBA")
    if im.mode in ("RGBA", "RGBa"):
        im = im.convert("RGBA")
        white = Image.new("RGBA", im.size, (255, 255, 255, 255))
        im = Image.alpha_composite(white, im)
    if im.mode != "RGB":
        im = im.convert("RGB")
    return im


def _icc_to_srgb(im, icc: bytes):
    try:
        src = ImageCms.ImageCmsProfile(io.BytesIO(icc))
    except (OSError, ImageCms.PyCMSError):
        return im  # an unreadable profile is dropped; pixels are taken as sRGB
    dst = ImageCms.createProfile("sRGB")
    alpha = None
    if im.mode == "RGBA":
        alpha = im.getchannel("A")
        im = im.convert("RGB")
    try:
        out = ImageCms.profileToProfile(im, src, dst, renderingIntent=ImageCms.Intent.PERCEPTUAL, outputMode="RGB")
    except ImageCms.PyCMSError:
        return im if alpha is None else im.convert("RGBA")
    if out is None:  # profileToProfile returns None only when converting in place
        return im
    if alpha is not None:
        out.putalpha(alpha)
    return out


def fit_box(im, box: tuple[int, int] = DEFAULT_BOX):
    """Shrink (never enlarge) to fit inside ``box`` keeping the aspect ratio."""
    w, h = im.size
    scale = min(1.0, box[0] / w, box[1] / h)
    if scale >= 1.0:
        return im
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    return im.resize(size, Image.Resampling.LANCZOS, reducing_gap=None)


def encode(im, fmt: str) -> bytes:
    """Encode with fixed settings from a fresh image so no metadata can leak through."""
    clean = Image.frombytes("RGB", im.size, im.tobytes())
    buf = io.BytesIO()
    clean.save(buf, **(JPEG_SAVE_OPTIONS if fmt == "JPEG" else PNG_SAVE_OPTIONS))
    return buf.getvalue()


def normalize_image(
    source: bytes | str | Path,
    *,
    box: tuple[int, int] = DEFAULT_BOX,
    fmt: str = "auto",
    max_pixels: int = DEFAULT_MAX_PIXELS,
    what: str | None = None,
) -> NormalizedImage:
    """Decode ``source`` safely and return the pool's canonical encoding of it.

    ``fmt``: "JPEG", "PNG", or "auto" (JPEG for lossy sources, PNG for lossless ones).
    """
    fmt = fmt.upper()
    if fmt not in ("AUTO", "JPEG", "PNG"):
        raise MvlsibError(f"output format {fmt!r} unknown; use auto, jpeg or png")
    im = open_image(source, max_pixels=max_pixels, what=what, draft_box=box)
    if fmt == "AUTO":
        lossy = im.format in ("JPEG", "MPO") or (im.format == "WEBP" and not im.info.get("lossless"))
        fmt = "JPEG" if lossy else "PNG"
    rgb = fit_box(to_srgb_rgb(im), box)
    return NormalizedImage(encode(rgb, fmt), fmt, rgb.size[0], rgb.size[1])
