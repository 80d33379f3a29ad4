"""Normalisation of realistic awkward inputs, generated here."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageCms

from mvlsib.errors import MvlsibError
from mvlsib.image_pool.normalize import normalize_image, open_image


def _save(im, fmt, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, format=fmt, **kw)
    return buf.getvalue()


def _decode(data: bytes):
    im = Image.open(io.BytesIO(data))
    im.load()
    return im


def _assert_clean(im):
    assert im.mode == "RGB"
    assert "icc_profile" not in im.info and "exif" not in im.info and not im.getexif()
    assert not any(k in im.info for k in ("xmp", "XML:com.adobe.xmp", "comment", "dpi"))


def exif_rotated_jpeg_with_gps(size=(800, 600)) -> bytes:
    """Stored landscape with a red top band; EXIF orientation 6 (rotate 90 CW) + GPS tags."""
    im = Image.new("RGB", size, (30, 120, 200))
    im.paste((220, 30, 30), (0, 0, size[0], 60))
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation
    exif[0x010F] = "TestCam"  # Make
    gps = {1: "N", 2: (47.0, 30.0, 0.0), 3: "E", 4: (8.0, 30.0, 0.0)}
    exif[0x8825] = gps
    return _save(im, "JPEG", exif=exif, quality=92)


def test_exif_rotation_applied_and_metadata_stripped():
    src = exif_rotated_jpeg_with_gps()
    assert Image.open(io.BytesIO(src)).getexif().get_ifd(0x8825)  # the input really has GPS
    out = normalize_image(src)
    im = _decode(out.data)
    _assert_clean(im)
    assert out.format == "JPEG" and im.size == (360, 480)  # portrait after rotation, fitted to 640x480
    # Orientation 6: the stored top edge ends up on the right.
    r, g, b = im.getpixel((im.width - 5, im.height // 2))
    assert r > 180 and b < 90
    r, g, b = im.getpixel((5, im.height // 2))
    assert b > 150 and r < 90
    assert b"GPS" not in out.data and b"TestCam" not in out.data and b"Exif" not in out.data


def test_cmyk_jpeg_becomes_rgb():
    im = Image.new("CMYK", (500, 400), (0, 255, 255, 0))  # pure red in CMYK
    out = normalize_image(_save(im, "JPEG", quality=95))
    got = _decode(out.data)
    _assert_clean(got)
    r, g, b = got.getpixel((250, 200))
    assert r > 200 and g < 60 and b < 60


def test_png_alpha_flattened_on_white():
    im = Image.new("RGBA", (400, 300), (0, 0, 255, 0))
    im.paste((0, 0, 255, 255), (0, 0, 200, 300))
    out = normalize_image(_save(im, "PNG"))
    got = _decode(out.data)
    _assert_clean(got)
    assert out.format == "PNG"
    assert got.getpixel((300, 150)) == (255, 255, 255)
    assert got.getpixel((100, 150)) == (0, 0, 255)


def test_palette_with_transparency_and_la():
    p = Image.new("P", (300, 300), 0)
    p.putpalette([255, 0, 0, 0, 255, 0] + [0] * 762)
    p.paste(1, (0, 0, 150, 300))
    p.info["transparency"] = 0
    got = _decode(normalize_image(_save(p, "PNG", transparency=0)).data)
    _assert_clean(got)
    assert got.getpixel((250, 150)) == (255, 255, 255)
    assert got.getpixel((50, 150)) == (0, 255, 0)
    la = Image.new("LA", (300, 300), (0, 0))
    la.paste((0, 255), (0, 0, 100, 300))
    got = _decode(normalize_image(_save(la, "PNG")).data)
    assert got.getpixel((50, 10)) == (0, 0, 0) and got.getpixel((250, 10)) == (255, 255, 255)


def test_16_bit_greyscale_is_scaled_not_clipped():
    im = Image.new("I;16", (300, 300), 32768)  # mid grey in 16 bits
    data = _save(im, "PNG")
    assert Image.open(io.BytesIO(data)).mode.startswith("I")
    got = _decode(normalize_image(data).data)
    r, g, b = got.getpixel((10, 10))
    assert 120 <= r <= 135 and r == g == b


def test_icc_profile_converted_and_removed():
    im = Image.new("RGB", (400, 300), (200, 100, 50))
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    out = normalize_image(_save(im, "JPEG", icc_profile=icc, quality=95))
    got = _decode(out.data)
    _assert_clean(got)
    r, g, b = got.getpixel((200, 150))
    assert abs(r - 200) < 8 and abs(g - 100) < 8 and abs(b - 50) < 8


def test_box_is_configurable_and_small_images_are_not_enlarged():
    im = Image.new("RGB", (1000, 1000), (1, 2, 3))
    assert normalize_image(_save(im, "PNG"), box=(300, 200)).width == 200
    small = normalize_image(_save(Image.new("RGB", (320, 240)), "PNG"))
    assert (small.width, small.height) == (320, 240)


def test_same_input_same_bytes(topic_photos_dir):
    src = (topic_photos_dir / "travel" / "anam_sidi-bou-said.jpg").read_bytes()
    assert normalize_image(src).data == normalize_image(src).data


def test_truncated_file_is_refused(topic_photos_dir):
    src = (topic_photos_dir / "health" / "skimage_retina.jpg").read_bytes()
    with pytest.raises(MvlsibError, match="truncated"):
        normalize_image(src[: len(src) * 2 // 3], what="retina.jpg")


def test_decompression_bomb_is_refused_before_decoding():
    bomb = _save(Image.new("1", (12_000, 12_000)), "PNG")  # 144 Mpx in a few KB
    assert len(bomb) < 100_000
    with pytest.raises(MvlsibError, match="decompression-bomb guard"):
        open_image(bomb, what="bomb.png")


def test_not_an_image():
    with pytest.raises(MvlsibError, match="not a decodable image"):
        normalize_image(b"<html>not an image</html>", what="page.html")
