"""The bundled demo pool: 10 pictograms per topic, drawn with PIL by this module.

No photographs can be downloaded where the toolkit is developed and tested, so the
repository ships drawings made by code (CC0-1.0). A real release replaces them with
curated photographs (see docs/image_pool.md).

Every picture is drawn from fixed coordinates and colours: no random generator is used,
so the same PIL version gives the same bytes on every run. Pictures are drawn at twice
the output size and downscaled, which smooths edges without relying on anti-aliased
drawing primitives. Each picture has its own background (gradient, split horizon,
solid colour, pattern) and composition so that perceptual hashes of these simple
drawings stay far apart (see the near-duplicate check in :mod:`mvlsib.image_pool.check`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mvlsib.release_format.mvl_sib import TOPICS, topic_slug
from mvlsib.workdir.provenance import DEMO_AUTHOR, DEMO_LICENSE, DEMO_SOURCE_URL

WIDTH, HEIGHT = 640, 480
SCALE = 2  # drawn at 2x, downsampled with LANCZOS for smooth edges
LICENSE = DEMO_LICENSE
AUTHOR = DEMO_AUTHOR
SOURCE_URL = DEMO_SOURCE_URL


Color = tuple[int, int, int]
BLACK: Color = (30, 30, 35)
WHITE: Color = (255, 255, 255)


class Pen:
    """ImageDraw wrapper taking coordinates in output pixels (640x480) and scaling them."""

    def __init__(self, img):
        from PIL import ImageDraw

        self.img = img
        self.d = ImageDraw.Draw(img)

    @staticmethod
    def _s(xy):
        return [round(v * SCALE) for v in xy]

    @staticmethod
    def _b(box):
        x0, y0, x1, y1 = box
        return [
            round(min(x0, x1) * SCALE),
            round(min(y0, y1) * SCALE),
            round(max(x0, x1) * SCALE),
            round(max(y0, y1) * SCALE),
        ]

    def rect(self, box, fill=None, outline=BLACK, width=3):
        self.d.rectangle(self._b(box), fill=fill, outline=outline, width=width * SCALE if outline else 0)

    def rrect(self, box, r, fill=None, outline=BLACK, width=3):
        self.d.rounded_rectangle(
            self._b(box), radius=r * SCALE, fill=fill, outline=outline, width=width * SCALE if outline else 0
        )

    def oval(self, box, fill=None, outline=BLACK, width=3):
        self.d.ellipse(self._b(box), fill=fill, outline=outline, width=width * SCALE if outline else 0)

    def circle(self, cx, cy, r, fill=None, outline=BLACK, width=3):
        self.oval((cx - r, cy - r, cx + r, cy + r), fill, outline, width)

    def poly(self, pts, fill=None, outline=BLACK, width=3):
        flat = self._s([v for p in pts for v in p])
        self.d.polygon(flat, fill=fill, outline=outline, width=width * SCALE if outline else 0)

    def line(self, pts, fill=BLACK, width=3, joint="curve"):
        flat = self._s([v for p in pts for v in p])
        self.d.line(flat, fill=fill, width=width * SCALE, joint=joint)

    def arc(self, box, start, end, fill=BLACK, width=3):
        self.d.arc(self._b(box), start, end, fill=fill, width=width * SCALE)

    def pie(self, box, start, end, fill=None, outline=BLACK, width=3):
        self.d.pieslice(self._b(box), start, end, fill=fill, outline=outline, width=width * SCALE if outline else 0)

    def chord(self, box, start, end, fill=None, outline=BLACK, width=3):
        self.d.chord(self._b(box), start, end, fill=fill, outline=outline, width=width * SCALE if outline else 0)

    # ---- backgrounds
    def vgrad(self, top: Color, bottom: Color, y0=0, y1=HEIGHT):
        h = (y1 - y0) * SCALE
        for i in range(h):
            t = i / max(h - 1, 1)
            c = tuple(round(a + (b - a) * t) for a, b in zip(top, bottom))
            self.d.line([(0, y0 * SCALE + i), (WIDTH * SCALE, y0 * SCALE + i)], fill=c)

    def hgrad(self, left: Color, right: Color):
        w = WIDTH * SCALE
        for i in range(w):
            t = i / (w - 1)
            c = tuple(round(a + (b - a) * t) for a, b in zip(left, right))
            self.d.line([(i, 0), (i, HEIGHT * SCALE)], fill=c)

    def fill(self, c: Color):
        self.rect((0, 0, WIDTH, HEIGHT), fill=c, outline=None)

    def stripes(self, a: Color, b: Color, n=8, vertical=True):
        for i in range(n):
            c = a if i % 2 == 0 else b
            if vertical:
                self.rect((i * WIDTH / n, 0, (i + 1) * WIDTH / n, HEIGHT), fill=c, outline=None)
            else:
                self.rect((0, i * HEIGHT / n, WIDTH, (i + 1) * HEIGHT / n), fill=c, outline=None)

    def checker(self, a: Color, b: Color, n=8):
        s = WIDTH / n
        for i in range(n):
            for j in range(math.ceil(HEIGHT / s)):
                self.rect((i * s, j * s, (i + 1) * s, (j + 1) * s), fill=a if (i + j) % 2 == 0 else b, outline=None)

    def rays(self, cx, cy, a: Color, b: Color, n=16):
        R = 1000
        for i in range(n):
            a0, a1 = 2 * math.pi * i / n, 2 * math.pi * (i + 1) / n
            self.poly(
                [
                    (cx, cy),
                    (cx + R * math.cos(a0), cy + R * math.sin(a0)),
                    (cx + R * math.cos(a1), cy + R * math.sin(a1)),
                ],
                fill=a if i % 2 == 0 else b,
                outline=None,
            )

    def star(self, cx, cy, r, fill, outline=BLACK, points=5, inner=0.45, width=2):
        pts = []
        for i in range(points * 2):
            rr = r if i % 2 == 0 else r * inner
            ang = -math.pi / 2 + math.pi * i / points
            pts.append((cx + rr * math.cos(ang), cy + rr * math.sin(ang)))
        self.poly(pts, fill=fill, outline=outline, width=width)

    def cross(self, cx, cy, s, fill=(220, 30, 40), outline=None):
        t = s / 3
        self.poly(
            [
                (cx - t / 2, cy - s / 2),
                (cx + t / 2, cy - s / 2),
                (cx + t / 2, cy - t / 2),
                (cx + s / 2, cy - t / 2),
                (cx + s / 2, cy + t / 2),
                (cx + t / 2, cy + t / 2),
                (cx + t / 2, cy + s / 2),
                (cx - t / 2, cy + s / 2),
                (cx - t / 2, cy + t / 2),
                (cx - s / 2, cy + t / 2),
                (cx - s / 2, cy - t / 2),
                (cx - t / 2, cy - t / 2),
            ],
            fill=fill,
            outline=outline,
        )


# ---------------------------------------------------------------- shared motifs


def _sun(p: Pen, cx, cy, r, c=(255, 205, 60)):
    for i in range(12):
        a = 2 * math.pi * i / 12
        p.line(
            [
                (cx + (r + 8) * math.cos(a), cy + (r + 8) * math.sin(a)),
                (cx + (r + 26) * math.cos(a), cy + (r + 26) * math.sin(a)),
            ],
            fill=c,
            width=5,
        )
    p.circle(cx, cy, r, fill=c, outline=None)


def _cloud(p: Pen, x, y, s=1.0, c=WHITE):
    for dx, dy, r in ((0, 0, 22), (26, -12, 28), (56, 0, 22), (28, 8, 22)):
        p.circle(x + dx * s, y + dy * s, r * s, fill=c, outline=None)


def _mountains(p: Pen, base, peaks, c=(110, 120, 140), snow=WHITE):
    for x, w, h in peaks:
        p.poly([(x - w, base), (x, base - h), (x + w, base)], fill=c, outline=None)
        p.poly(
            [
                (x - w * 0.28, base - h * 0.72),
                (x, base - h),
                (x + w * 0.28, base - h * 0.72),
                (x + w * 0.1, base - h * 0.66),
                (x - w * 0.08, base - h * 0.74),
            ],
            fill=snow,
            outline=None,
        )


def _ball_soccer(p: Pen, cx, cy, r):
    p.circle(cx, cy, r, fill=WHITE, outline=BLACK, width=3)
    pent = [
        (
            cx + r * 0.38 * math.cos(-math.pi / 2 + 2 * math.pi * i / 5),
            cy + r * 0.38 * math.sin(-math.pi / 2 + 2 * math.pi * i / 5),
        )
        for i in range(5)
    ]
    p.poly(pent, fill=BLACK, outline=None)
    for i in range(5):
        a = -math.pi / 2 + 2 * math.pi * i / 5
        p.line([pent[i], (cx + r * 0.8 * math.cos(a), cy + r * 0.8 * math.sin(a))], width=2)
        a2 = a + math.pi / 5
        p.poly(
            [
                (cx + r * math.cos(a2 + d) * k, cy + r * math.sin(a2 + d) * k)
                for d, k in ((-0.25, 0.98), (0.25, 0.98), (0.18, 0.82), (-0.18, 0.82))
            ],
            fill=BLACK,
            outline=None,
        )


def _suitcase(p: Pen, x, y, w, h, c=(200, 80, 50), stickers=True):
    p.rrect((x + w * 0.32, y - h * 0.18, x + w * 0.68, y + 6), 8, fill=None, width=6)
    p.rrect((x, y, x + w, y + h), 14, fill=c, width=4)
    p.line([(x + w * 0.25, y), (x + w * 0.25, y + h)], width=4)
    p.line([(x + w * 0.75, y), (x + w * 0.75, y + h)], width=4)
    if stickers:
        p.circle(x + w * 0.5, y + h * 0.35, min(w, h) * 0.12, fill=(255, 220, 80), outline=None)
        p.rect((x + w * 0.38, y + h * 0.6, x + w * 0.62, y + h * 0.78), fill=(90, 170, 220), outline=None)


def _plane(p: Pen, cx, cy, s=1.0, c=WHITE, angle=0.0):
    def tr(pts):
        ca, sa = math.cos(angle), math.sin(angle)
        return [(cx + (x * ca - y * sa) * s, cy + (x * sa + y * ca) * s) for x, y in pts]

    p.poly(tr([(-120, -8), (100, -10), (130, 0), (100, 10), (-120, 8)]), fill=c, width=3)  # fuselage
    p.poly(tr([(-10, 0), (40, 0), (-30, -90), (-50, -90)]), fill=c, width=3)  # wing up
    p.poly(tr([(-10, 0), (40, 0), (-30, 90), (-50, 90)]), fill=c, width=3)  # wing down
    p.poly(tr([(-120, 0), (-95, 0), (-115, -40), (-130, -40)]), fill=c, width=3)
    p.poly(tr([(-120, 0), (-95, 0), (-115, 40), (-130, 40)]), fill=c, width=3)


def _flag(p: Pen, x, y, w, h, bands, vertical=False, pole=True):
    if pole:
        p.line([(x, y - 10), (x, y + h * 3.2)], fill=(90, 90, 90), width=5)
        p.circle(x, y - 12, 6, fill=(220, 190, 60), outline=None)
    n = len(bands)
    for i, c in enumerate(bands):
        if vertical:
            p.rect((x + w * i / n, y, x + w * (i + 1) / n, y + h), fill=c, outline=None)
        else:
            p.rect((x, y + h * i / n, x + w, y + h * (i + 1) / n), fill=c, outline=None)
    p.rect((x, y, x + w, y + h), fill=None, width=2)


# ---------------------------------------------------------------- entertainment


def ent_film_reel(p: Pen):
    p.vgrad((40, 30, 70), (120, 40, 90))
    cx, cy, r = 250, 220, 150
    p.circle(cx, cy, r, fill=(170, 175, 185), width=5)
    p.circle(cx, cy, 22, fill=(60, 60, 70), width=3)
    for i in range(6):
        a = 2 * math.pi * i / 6
        p.circle(cx + 88 * math.cos(a), cy + 88 * math.sin(a), 36, fill=(40, 30, 70), width=3)
    # film strip unrolling to the right
    p.poly([(cx + 60, cy + r - 12), (640, 330), (640, 420), (cx + 40, cy + r + 60)], fill=(25, 25, 25), outline=None)
    for i in range(9):
        x = cx + 80 + i * 38
        y = 345 + (x - cx - 80) * 0.02
        p.rect((x, y, x + 18, y + 10), fill=WHITE, outline=None)
        p.rect((x, y + 52, x + 18, y + 62), fill=WHITE, outline=None)


def ent_stage(p: Pen):
    p.fill((20, 15, 25))
    p.poly([(320, 0), (180, 400), (460, 400)], fill=(255, 245, 190), outline=None)  # spotlight beam
    p.rect((0, 400, 640, 480), fill=(120, 70, 30), outline=None)  # stage floor
    for side in (0, 1):
        x0 = 0 if side == 0 else 470
        p.rect((x0, 0, x0 + 170, 420), fill=(180, 20, 35), outline=None)
        for i in range(6):
            x = x0 + 14 + i * 28
            p.line([(x, 0), (x, 420)], fill=(130, 10, 25), width=5)
    p.rect((0, 0, 640, 50), fill=(150, 15, 30), outline=None)
    for i in range(8):
        p.chord((i * 80, 20, i * 80 + 80, 80), 0, 180, fill=(150, 15, 30), outline=None)
    # performer silhouette with microphone
    p.circle(320, 268, 22, fill=BLACK, outline=None)
    p.poly([(295, 292), (345, 292), (355, 400), (285, 400)], fill=BLACK, outline=None)
    p.line([(345, 310), (372, 272)], fill=BLACK, width=8)
    p.circle(375, 268, 8, fill=(90, 90, 90), outline=None)


def ent_masks(p: Pen):
    p.vgrad((255, 215, 90), (230, 140, 40))
    # ribbons behind
    p.line([(90, 120), (40, 60), (20, 100)], fill=(160, 30, 120), width=8)
    p.line([(560, 170), (610, 110), (630, 150)], fill=(160, 30, 120), width=8)
    # comedy mask: white, smiling, tilted left
    p.oval((90, 80, 310, 360), fill=(250, 250, 245), width=5)
    p.arc((130, 160, 190, 210), 200, 340, width=8)
    p.arc((210, 160, 270, 210), 200, 340, width=8)
    p.chord((135, 230, 265, 320), 0, 180, fill=(40, 20, 20), width=3)
    p.arc((120, 120, 200, 150), 200, 340, width=5)
    p.arc((200, 120, 280, 150), 200, 340, width=5)
    # tragedy mask: dark, frowning
    p.oval((330, 130, 550, 410), fill=(60, 60, 90), width=5)
    p.arc((370, 220, 430, 260), 20, 160, fill=WHITE, width=8)
    p.arc((450, 220, 510, 260), 20, 160, fill=WHITE, width=8)
    p.chord((385, 310, 495, 390), 180, 360, fill=WHITE, outline=None)
    p.circle(392, 285, 9, fill=(120, 200, 250), outline=None)


def ent_popcorn(p: Pen):
    p.stripes((30, 60, 120), (25, 50, 100), n=12)
    p.poly([(220, 180), (420, 180), (395, 440), (245, 440)], fill=WHITE, width=4)
    for i in range(0, 5, 2):
        p.poly(
            [(220 + i * 40, 180), (260 + i * 40, 180), (254 + i * 34, 440), (245 + i * 30, 440)],
            fill=(220, 30, 40),
            outline=None,
        )
    p.poly([(220, 180), (420, 180), (395, 440), (245, 440)], fill=None, width=4)
    for cx, cy in (
        (240, 170),
        (275, 150),
        (310, 140),
        (350, 148),
        (390, 165),
        (260, 125),
        (300, 110),
        (340, 115),
        (375, 130),
        (320, 85),
        (285, 95),
    ):
        p.circle(cx, cy, 26, fill=(255, 248, 215), outline=(200, 170, 90), width=2)
    p.star(120, 110, 40, (255, 215, 0))
    p.star(530, 320, 34, (255, 215, 0))


def ent_clapper(p: Pen):
    p.hgrad((0, 140, 140), (20, 60, 110))
    p.rect((150, 200, 490, 400), fill=(35, 35, 40), width=4)
    # clapstick, opened
    p.poly([(150, 195), (480, 120), (490, 160), (158, 236)], fill=WHITE, width=3)
    for i in range(6):
        x = 170 + i * 55
        y = 190 - (x - 150) * 0.227
        p.poly([(x, y + 2), (x + 28, y - 5), (x + 44, y + 30), (x + 16, y + 37)], fill=BLACK, outline=None)
    p.rect((150, 200, 490, 240), fill=WHITE, outline=BLACK, width=3)
    for i in range(6):
        x = 155 + i * 57
        p.poly([(x, 200), (x + 28, 200), (x + 50, 240), (x + 22, 240)], fill=BLACK, outline=None)
    for y in (280, 330, 370):
        p.line([(175, y), (465, y)], fill=(220, 220, 220), width=3)
    p.line([(320, 250), (320, 390)], fill=(220, 220, 220), width=3)


def ent_microphone(p: Pen):
    p.rays(320, 200, (130, 40, 160), (90, 20, 120), n=20)
    p.line([(320, 300), (320, 440)], fill=(70, 70, 75), width=10)
    p.oval((240, 430, 400, 460), fill=(70, 70, 75), outline=None)
    p.rrect((295, 220, 345, 310), 10, fill=(40, 40, 45), width=3)
    p.circle(320, 180, 62, fill=(190, 190, 200), width=4)
    for i in range(-2, 3):
        p.line([(290, 180 + i * 20), (350, 180 + i * 20)], fill=(120, 120, 130), width=2)
    # music notes
    for x, y, c in ((120, 140, (255, 220, 60)), (500, 110, (80, 230, 200)), (470, 300, (255, 120, 160))):
        p.oval((x - 20, y + 50, x + 10, y + 74), fill=c, outline=None)
        p.line([(x + 8, y + 60), (x + 8, y)], fill=c, width=6)
        p.line([(x + 8, y), (x + 36, y + 12)], fill=c, width=6)


def ent_guitar(p: Pen):
    p.fill((250, 235, 200))
    p.checker((250, 235, 200), (240, 220, 180), n=10)
    body = (170, 120, 50)
    p.circle(230, 330, 110, fill=body, width=4)
    p.circle(320, 250, 85, fill=body, width=4)
    p.circle(230, 330, 107, fill=body, outline=None)
    p.circle(320, 250, 82, fill=body, outline=None)
    p.circle(270, 295, 32, fill=(40, 25, 10), outline=None)
    p.poly([(345, 215), (520, 40), (545, 65), (370, 240)], fill=(90, 55, 25), width=3)
    p.poly([(515, 45), (560, 0), (600, 40), (550, 80)], fill=(60, 35, 15), width=3)
    for k in range(-2, 3):
        p.line([(200 + k * 4, 370 + k * 4), (540 + k * 4, 50 + k * 4)], fill=(230, 230, 230), width=1)
    p.rect((185, 345, 225, 360), fill=BLACK, outline=None)


def ent_tv(p: Pen):
    p.vgrad((255, 180, 190), (250, 120, 80))
    p.line([(280, 110), (230, 40)], width=5)
    p.line([(360, 110), (420, 30)], width=5)
    p.rrect((130, 110, 510, 390), 26, fill=(120, 80, 50), width=5)
    p.rrect((160, 135, 420, 365), 20, fill=(60, 200, 230), width=4)
    # a show on screen: sun and hills
    p.chord((160, 270, 420, 460), 180, 360, fill=(70, 170, 80), outline=None)
    p.circle(360, 190, 28, fill=(255, 230, 80), outline=None)
    p.rrect((160, 135, 420, 365), 20, fill=None, width=4)
    for y in (180, 240):
        p.circle(465, y, 18, fill=(220, 200, 160), width=3)
    for y in (300, 320, 340):
        p.line([(445, y), (485, y)], width=3)
    p.rect((180, 390, 210, 420), fill=(80, 50, 30), outline=None)
    p.rect((430, 390, 460, 420), fill=(80, 50, 30), outline=None)


def ent_tickets(p: Pen):
    p.fill((35, 120, 90))
    for x, y, c in ((90, 90, (250, 200, 60)), (200, 240, (240, 90, 100))):
        p.rect((x, y, x + 360, y + 150), fill=c, width=4)
        p.circle(x, y + 75, 22, fill=(35, 120, 90), width=4)
        p.circle(x + 360, y + 75, 22, fill=(35, 120, 90), width=4)
        for i in range(8):
            p.rect((x + 270, y + 10 + i * 17, x + 274, y + 20 + i * 17), fill=BLACK, outline=None)
        p.star(x + 130, y + 75, 42, WHITE)
        p.rect((x + 190, y + 50, x + 250, y + 60), fill=BLACK, outline=None)
        p.rect((x + 190, y + 80, x + 240, y + 90), fill=BLACK, outline=None)


def ent_camera(p: Pen):
    p.vgrad((20, 20, 60), (60, 20, 40))
    p.circle(210, 130, 70, fill=(60, 60, 70), width=4)
    p.circle(350, 130, 70, fill=(60, 60, 70), width=4)
    for cx in (210, 350):
        for i in range(4):
            a = math.pi / 4 + i * math.pi / 2
            p.circle(cx + 38 * math.cos(a), 130 + 38 * math.sin(a), 14, fill=(20, 20, 60), outline=None)
    p.rrect((150, 200, 420, 350), 16, fill=(45, 45, 55), width=4)
    p.poly([(420, 240), (520, 200), (520, 350), (420, 310)], fill=(80, 80, 90), width=4)
    p.poly([(520, 215), (640, 150), (640, 400), (520, 335)], fill=(255, 250, 200), outline=None)  # projector light
    p.line([(240, 350), (180, 460)], fill=(90, 90, 90), width=8)
    p.line([(330, 350), (390, 460)], fill=(90, 90, 90), width=8)
    p.line([(285, 350), (285, 460)], fill=(90, 90, 90), width=8)


# ---------------------------------------------------------------- geography


def geo_mountains_river(p: Pen):
    p.vgrad((120, 180, 240), (200, 230, 255), 0, 300)
    _sun(p, 520, 80, 36)
    _mountains(p, 300, ((140, 200, 210), (330, 220, 250), (520, 180, 190)))
    p.rect((0, 300, 640, 480), fill=(90, 170, 80), outline=None)
    p.poly(
        [(300, 300), (340, 300), (380, 360), (300, 420), (360, 480), (220, 480), (250, 420), (320, 360)],
        fill=(60, 140, 220),
        outline=None,
    )


def geo_globe(p: Pen):
    p.fill((15, 20, 45))
    for x, y in ((50, 60), (580, 40), (600, 400), (80, 420), (470, 100), (140, 250), (560, 260)):
        p.star(x, y, 8, WHITE, outline=None)
    p.circle(320, 240, 190, fill=(40, 110, 200), width=4)
    p.poly(
        [(220, 120), (300, 100), (320, 170), (280, 230), (300, 300), (250, 360), (220, 280), (190, 200)],
        fill=(70, 170, 80),
        outline=None,
    )
    p.poly([(360, 130), (450, 140), (480, 220), (420, 260), (400, 330), (360, 250)], fill=(70, 170, 80), outline=None)
    for k in (-1, 0, 1):
        w = 190 * (1 - 0.5 * abs(k)) if k else 0
        p.oval((320 - w, 50, 320 + w, 430), fill=None, outline=(200, 220, 255), width=2)
    for dy in (-110, -55, 0, 55, 110):
        w = math.sqrt(max(190**2 - dy**2, 0))
        p.line([(320 - w, 240 + dy), (320 + w, 240 + dy)], fill=(200, 220, 255), width=2)
    p.circle(320, 240, 190, fill=None, width=4)


def geo_map_compass(p: Pen):
    p.fill((120, 90, 60))
    p.poly(
        [(60, 60), (230, 40), (410, 60), (580, 40), (580, 430), (410, 450), (230, 430), (60, 450)],
        fill=(245, 230, 190),
        width=3,
    )
    p.line([(230, 40), (230, 430)], fill=(210, 190, 150), width=2)
    p.line([(410, 60), (410, 450)], fill=(210, 190, 150), width=2)
    p.poly([(90, 120), (180, 90), (220, 170), (160, 260), (100, 230)], fill=(150, 200, 130), width=2)
    p.poly([(260, 300), (350, 280), (390, 370), (300, 410)], fill=(150, 200, 130), width=2)
    p.line([(150, 300), (200, 340), (260, 330), (320, 200), (400, 180)], fill=(200, 40, 40), width=4)
    p.line([(392, 172), (408, 188)], fill=(200, 40, 40), width=5)
    p.line([(392, 188), (408, 172)], fill=(200, 40, 40), width=5)
    cx, cy = 490, 300
    p.circle(cx, cy, 60, fill=(250, 245, 225), width=3)
    p.poly([(cx, cy - 58), (cx + 12, cy), (cx, cy + 58), (cx - 12, cy)], fill=(200, 40, 40), width=2)
    p.poly([(cx - 58, cy), (cx, cy - 12), (cx + 58, cy), (cx, cy + 12)], fill=(60, 60, 60), width=2)


def geo_island(p: Pen):
    p.vgrad((255, 170, 120), (255, 220, 170), 0, 260)
    p.circle(320, 250, 70, fill=(255, 120, 60), outline=None)
    p.vgrad((30, 140, 190), (10, 60, 120), 260, 480)
    p.chord((170, 300, 470, 420), 180, 360, fill=(240, 210, 140), outline=None)
    p.line([(330, 360), (320, 290), (300, 220), (290, 180)], fill=(110, 70, 30), width=12)
    for ang in (-160, -120, -60, -20, 20):
        a = math.radians(ang)
        p.poly(
            [
                (290, 180),
                (290 + 95 * math.cos(a - 0.15), 180 + 95 * math.sin(a - 0.15) + 20),
                (290 + 110 * math.cos(a), 180 + 110 * math.sin(a) + 30),
            ],
            fill=(40, 140, 60),
            outline=None,
        )
    for y in (400, 440):
        for x in range(20, 640, 120):
            p.arc((x, y, x + 50, y + 20), 200, 340, fill=(200, 230, 255), width=3)


def geo_volcano(p: Pen):
    p.vgrad((70, 50, 70), (240, 120, 70))
    p.poly([(40, 480), (250, 170), (390, 170), (600, 480)], fill=(90, 60, 50), outline=None)
    p.poly(
        [(250, 170), (280, 220), (300, 190), (320, 250), (345, 195), (365, 225), (390, 170)],
        fill=(240, 80, 30),
        outline=None,
    )
    p.poly(
        [(320, 250), (300, 330), (330, 400), (310, 480), (350, 480), (360, 390), (335, 320)],
        fill=(240, 100, 30),
        outline=None,
    )
    for x, y, r in ((300, 120, 40), (350, 80, 50), (280, 50, 35), (410, 40, 40)):
        p.circle(x, y, r, fill=(110, 100, 110), outline=None)
    p.circle(250, 140, 9, fill=(255, 150, 0), outline=None)
    p.circle(400, 110, 7, fill=(255, 150, 0), outline=None)


def geo_desert(p: Pen):
    p.vgrad((250, 200, 120), (255, 240, 200), 0, 280)
    _sun(p, 130, 110, 45, c=(255, 160, 40))
    p.chord((-200, 230, 420, 600), 180, 360, fill=(225, 160, 80), outline=None)
    p.chord((200, 260, 860, 640), 180, 360, fill=(210, 140, 60), outline=None)
    p.rect((0, 400, 640, 480), fill=(235, 180, 100), outline=None)
    # cactus
    p.rrect((480, 200, 510, 400), 14, fill=(60, 140, 70), outline=None)
    p.rrect((440, 250, 466, 320), 12, fill=(60, 140, 70), outline=None)
    p.rect((450, 305, 490, 325), fill=(60, 140, 70), outline=None)
    p.rrect((524, 230, 550, 300), 12, fill=(60, 140, 70), outline=None)
    p.rect((500, 285, 540, 305), fill=(60, 140, 70), outline=None)


def geo_lake_forest(p: Pen):
    p.vgrad((170, 210, 240), (230, 240, 250), 0, 250)
    _cloud(p, 90, 70)
    _cloud(p, 420, 100, 1.3)
    p.chord((-100, 150, 400, 400), 180, 360, fill=(90, 140, 90), outline=None)
    p.chord((250, 170, 800, 380), 180, 360, fill=(70, 120, 80), outline=None)
    p.rect((0, 250, 640, 480), fill=(60, 130, 70), outline=None)
    p.oval((100, 290, 540, 440), fill=(70, 150, 210), outline=None)
    for x in range(20, 640, 70):
        if 110 < x < 520:
            continue
        for y0 in (270, 330):
            p.poly([(x, y0 - 70), (x - 28, y0 + 10), (x + 28, y0 + 10)], fill=(30, 90, 50), outline=None)
            p.rect((x - 5, y0 + 10, x + 5, y0 + 25), fill=(100, 70, 40), outline=None)


def geo_waterfall(p: Pen):
    p.fill((170, 220, 200))
    p.poly([(0, 0), (250, 0), (250, 200), (200, 480), (0, 480)], fill=(110, 100, 95), outline=None)
    p.poly([(390, 0), (640, 0), (640, 480), (440, 480), (390, 200)], fill=(120, 110, 100), outline=None)
    p.vgrad((80, 170, 230), (60, 150, 210), 0, 40)
    p.poly([(250, 0), (390, 0), (390, 200), (250, 200)], fill=(90, 180, 240), outline=None)
    for x in range(262, 390, 22):
        p.line([(x, 0), (x, 200)], fill=(220, 240, 255), width=4)
    p.poly([(200, 200), (440, 200), (500, 480), (150, 480)], fill=(60, 140, 210), outline=None)
    for x, y in ((260, 215), (300, 205), (340, 210), (380, 215)):
        _cloud(p, x - 30, y, 0.7)
    for x, y in ((60, 80), (580, 120), (90, 300), (560, 330)):
        p.circle(x, y, 30, fill=(60, 130, 60), outline=None)


def geo_coast_cliffs(p: Pen):
    p.vgrad((120, 190, 250), (190, 225, 255), 0, 230)
    _cloud(p, 380, 60)
    p.vgrad((20, 110, 170), (10, 70, 130), 230, 480)
    p.poly([(0, 140), (120, 120), (220, 150), (260, 230), (300, 480), (0, 480)], fill=(200, 170, 120), outline=None)
    p.poly([(0, 120), (130, 100), (220, 130), (220, 150), (120, 120), (0, 140)], fill=(90, 160, 70), outline=None)
    p.poly([(470, 200), (530, 170), (570, 260), (560, 340), (460, 340)], fill=(170, 140, 100), outline=None)
    # lighthouse
    p.poly([(150, 40), (180, 40), (188, 122), (142, 122)], fill=WHITE, width=2)
    p.rect((144, 70, 186, 86), fill=(220, 40, 40), outline=None)
    p.rect((145, 25, 185, 42), fill=(255, 220, 80), width=2)
    for x in (330, 420, 360, 600):
        p.arc((x, 380 if x < 400 else 300, x + 60, 400 if x < 400 else 320), 200, 340, fill=WHITE, width=3)


# ---------------------------------------------------------------- health


def hea_red_cross(p: Pen):
    p.fill(WHITE)
    p.cross(320, 240, 300, fill=(220, 30, 40))


def hea_stethoscope(p: Pen):
    p.vgrad((200, 230, 250), (150, 200, 240))
    c = (50, 60, 80)
    p.line([(230, 60), (220, 180), (260, 280), (330, 300)], fill=c, width=10)
    p.line([(350, 60), (380, 180), (360, 270), (330, 300)], fill=c, width=10)
    p.line([(330, 300), (340, 380), (420, 410), (470, 350)], fill=c, width=10)
    p.circle(230, 55, 12, fill=(180, 180, 190), outline=None)
    p.circle(350, 55, 12, fill=(180, 180, 190), outline=None)
    p.circle(480, 320, 50, fill=(190, 195, 205), width=5)
    p.circle(480, 320, 28, fill=(130, 140, 160), outline=None)
    p.cross(120, 380, 90, fill=(220, 30, 40))


def hea_pills(p: Pen):
    p.fill((235, 250, 240))
    p.stripes((235, 250, 240), (215, 240, 225), n=10, vertical=False)
    p.rrect((90, 110, 270, 400), 18, fill=(240, 150, 40), width=4)
    p.rect((80, 80, 280, 130), fill=WHITE, width=4)
    p.rect((110, 200, 250, 320), fill=WHITE, outline=None)
    p.cross(180, 260, 80, fill=(40, 150, 90))
    for x, y, a, c1, c2 in (
        (380, 150, 0.5, (220, 40, 60), WHITE),
        (470, 300, -0.4, (40, 110, 220), (250, 220, 60)),
        (360, 370, 0.1, (120, 200, 80), WHITE),
    ):
        dx, dy = 50 * math.cos(a), 50 * math.sin(a)
        p.line([(x - dx, y - dy), (x, y)], fill=c1, width=44, joint=None)
        p.line([(x, y), (x + dx, y + dy)], fill=c2, width=44, joint=None)
        p.circle(x - dx, y - dy, 22, fill=c1, outline=None)
        p.circle(x + dx, y + dy, 22, fill=c2, outline=None)
    p.circle(560, 120, 26, fill=WHITE, width=3)
    p.line([(540, 120), (580, 120)], width=3)


def hea_syringe(p: Pen):
    p.hgrad((240, 220, 250), (200, 230, 250))
    a = -0.5
    ca, sa = math.cos(a), math.sin(a)

    def tr(x, y):
        return (320 + x * ca - y * sa, 240 + x * sa + y * ca)

    p.poly([tr(-160, -35), tr(120, -35), tr(120, 35), tr(-160, 35)], fill=(230, 245, 255), width=4)
    p.poly([tr(-20, -31), tr(118, -31), tr(118, 31), tr(-20, 31)], fill=(100, 190, 240), outline=None)
    p.poly([tr(120, -12), tr(160, -12), tr(160, 12), tr(120, 12)], fill=(190, 190, 200), width=3)
    p.line([tr(160, 0), tr(270, 0)], fill=(120, 120, 130), width=4)
    p.poly([tr(-250, -8), tr(-160, -8), tr(-160, 8), tr(-250, 8)], fill=(190, 190, 200), width=3)
    p.poly([tr(-270, -45), tr(-250, -45), tr(-250, 45), tr(-270, 45)], fill=(190, 190, 200), width=3)
    for i in range(6):
        p.line([tr(-120 + i * 40, -35), tr(-120 + i * 40, -15)], width=3)
    p.circle(520, 400, 12, fill=(100, 190, 240), outline=None)


def hea_heart_ecg(p: Pen):
    p.fill((20, 30, 40))
    for x in range(0, 640, 40):
        p.line([(x, 0), (x, 480)], fill=(30, 60, 50), width=1)
    for y in range(0, 480, 40):
        p.line([(0, y), (640, y)], fill=(30, 60, 50), width=1)
    p.circle(250, 180, 90, fill=(230, 40, 60), outline=None)
    p.circle(390, 180, 90, fill=(230, 40, 60), outline=None)
    p.poly([(166, 215), (474, 215), (320, 400)], fill=(230, 40, 60), outline=None)
    p.line(
        [
            (0, 300),
            (150, 300),
            (180, 260),
            (210, 300),
            (250, 300),
            (280, 120),
            (320, 420),
            (350, 300),
            (420, 300),
            (450, 270),
            (480, 300),
            (640, 300),
        ],
        fill=(60, 255, 120),
        width=6,
    )


def hea_hospital(p: Pen):
    p.vgrad((140, 200, 250), (220, 240, 255), 0, 380)
    p.rect((0, 380, 640, 480), fill=(110, 180, 90), outline=None)
    p.rect((150, 120, 490, 400), fill=(245, 245, 240), width=4)
    p.rect((250, 60, 390, 120), fill=(245, 245, 240), width=4)
    p.cross(320, 90, 46, fill=(220, 30, 40))
    for row in range(3):
        for col in range(5):
            if row == 2 and col == 2:
                continue
            x, y = 175 + col * 62, 145 + row * 70
            p.rect((x, y, x + 40, y + 42), fill=(120, 180, 230), width=2)
    p.rect((290, 320, 350, 400), fill=(90, 150, 200), width=3)
    p.rect((270, 290, 370, 312), fill=(220, 30, 40), outline=None)


def hea_first_aid(p: Pen):
    p.fill((70, 160, 120))
    p.rrect((250, 90, 390, 150), 16, fill=None, outline=(40, 40, 40), width=12)
    p.rrect((120, 130, 520, 420), 30, fill=(230, 40, 50), width=5)
    p.rect((120, 190, 520, 200), fill=(190, 20, 30), outline=None)
    p.rrect((250, 220, 390, 360), 10, fill=WHITE, outline=None)
    p.cross(320, 290, 110, fill=(230, 40, 50))


def hea_thermometer(p: Pen):
    p.vgrad((255, 240, 200), (255, 200, 180))
    p.rrect((290, 40, 350, 380), 30, fill=WHITE, width=4)
    p.circle(320, 390, 52, fill=(220, 30, 40), width=4)
    p.rect((308, 150, 332, 360), fill=(220, 30, 40), outline=None)
    for i in range(9):
        y = 70 + i * 32
        p.line([(350, y), (375 if i % 2 == 0 else 365, y)], width=3)
    _sun(p, 140, 130, 45, c=(255, 150, 50))
    p.line([(440, 160), (540, 160)], fill=(200, 60, 60), width=8)
    p.line([(490, 110), (490, 210)], fill=(200, 60, 60), width=8)


def hea_ambulance(p: Pen):
    p.vgrad((180, 220, 255), (230, 245, 255), 0, 360)
    p.rect((0, 360, 640, 480), fill=(90, 90, 95), outline=None)
    for x in range(20, 640, 120):
        p.rect((x, 415, x + 60, 425), fill=WHITE, outline=None)
    p.rect((80, 170, 400, 360), fill=WHITE, width=4)
    p.poly([(400, 210), (500, 210), (560, 280), (560, 360), (400, 360)], fill=WHITE, width=4)
    p.poly([(420, 225), (490, 225), (535, 280), (420, 280)], fill=(120, 180, 230), width=3)
    p.rect((80, 290, 560, 310), fill=(220, 30, 40), outline=None)
    p.cross(240, 240, 80, fill=(220, 30, 40))
    p.rect((200, 150, 260, 170), fill=(40, 90, 230), width=2)
    for x in (170, 470):
        p.circle(x, 360, 40, fill=(40, 40, 40), outline=None)
        p.circle(x, 360, 16, fill=(180, 180, 180), outline=None)


def hea_tooth_brush(p: Pen):
    p.fill((180, 230, 235))
    p.checker((180, 230, 235), (165, 220, 228), n=8)
    p.poly(
        [
            (140, 120),
            (200, 100),
            (260, 110),
            (320, 100),
            (380, 120),
            (390, 200),
            (350, 300),
            (330, 420),
            (300, 420),
            (270, 300),
            (250, 300),
            (230, 420),
            (200, 420),
            (180, 300),
            (140, 200),
        ],
        fill=WHITE,
        width=5,
    )
    p.arc((180, 140, 230, 190), 200, 300, fill=(160, 200, 220), width=5)
    p.line([(420, 440), (560, 120)], fill=(60, 120, 230), width=22)
    p.rect((535, 80, 590, 150), fill=(240, 240, 250), width=3)
    for i in range(4):
        p.line([(540 + i * 14, 80), (540 + i * 14, 60)], fill=(60, 200, 200), width=6)


# ---------------------------------------------------------------- politics


def pol_ballot_box(p: Pen):
    p.vgrad((230, 235, 245), (190, 200, 225))
    p.poly([(140, 200), (460, 200), (520, 150), (200, 150)], fill=(200, 210, 230), width=4)
    p.rect((140, 200, 460, 420), fill=(40, 80, 160), width=4)
    p.poly([(460, 200), (520, 150), (520, 370), (460, 420)], fill=(30, 60, 130), width=4)
    p.poly([(270, 172), (370, 172), (382, 162), (282, 162)], fill=BLACK, outline=None)
    p.poly([(290, 40), (380, 40), (370, 170), (280, 170)], fill=WHITE, width=3)
    p.line([(300, 80), (320, 105), (360, 60)], fill=(30, 150, 60), width=8)
    p.star(300, 310, 60, WHITE, outline=None)


def pol_capitol(p: Pen):
    p.vgrad((250, 200, 150), (250, 235, 210), 0, 400)
    p.rect((0, 400, 640, 480), fill=(120, 160, 90), outline=None)
    p.rect((60, 300, 580, 400), fill=(240, 235, 220), width=3)
    p.rect((190, 220, 450, 300), fill=(240, 235, 220), width=3)
    p.chord((220, 90, 420, 290), 180, 360, fill=(240, 235, 220), width=3)
    p.rect((310, 50, 330, 95), fill=(240, 235, 220), width=2)
    p.circle(320, 45, 10, fill=(240, 235, 220), width=2)
    for x in range(80, 580, 36):
        p.rect((x, 315, x + 14, 395), fill=(210, 205, 190), outline=None)
    for x in range(205, 450, 30):
        p.rect((x, 230, x + 12, 298), fill=(210, 205, 190), outline=None)
    p.rect((40, 395, 600, 410), fill=(200, 195, 180), outline=None)
    p.rect((320, 20, 320, 20), fill=None, width=2)  # tip of the lantern's spire (kept: pool bytes are published)


def pol_podium(p: Pen):
    p.fill((20, 50, 110))
    for i in range(8):
        p.star(60 + i * 75, 40 + (i % 2) * 30, 14, (255, 255, 255), outline=None)
    p.poly([(190, 260), (450, 260), (420, 470), (220, 470)], fill=(120, 75, 40), width=4)
    p.rect((180, 240, 460, 270), fill=(140, 90, 50), width=4)
    p.circle(320, 350, 45, fill=(240, 200, 60), width=3)
    p.star(320, 350, 30, (20, 50, 110), outline=None)
    for x1 in (250, 390):
        p.line([(320, 240), (x1, 160)], fill=(60, 60, 60), width=5)
        p.oval((x1 - 12, 140, x1 + 12, 175), fill=(40, 40, 40), outline=None)
    _flag(p, 80, 150, 80, 55, [(220, 40, 40), WHITE, (40, 90, 200)])
    _flag(p, 560, 150, -80, 55, [(40, 150, 70), WHITE, (220, 40, 40)])


def pol_flags(p: Pen):
    p.vgrad((110, 180, 240), (210, 235, 255))
    p.rect((0, 400, 640, 480), fill=(150, 150, 150), outline=None)
    specs = [
        ((255, 205, 0), (0, 0, 0), (220, 0, 0)),
        ((0, 85, 164), WHITE, (239, 65, 53)),
        ((0, 140, 70), WHITE, (205, 33, 42)),
        ((20, 20, 20), (220, 20, 20), (250, 200, 0)),
        ((0, 100, 200), (255, 210, 0), (0, 100, 200)),
    ]
    for i, bands in enumerate(specs):
        _flag(p, 50 + i * 120, 100 + (i % 2) * 40, 90, 60, list(bands), vertical=(i % 2 == 1))


def pol_gavel(p: Pen):
    p.fill((90, 40, 30))
    p.vgrad((110, 50, 40), (60, 25, 20))
    p.oval((140, 360, 500, 430), fill=(150, 95, 50), width=4)
    p.rect((140, 370, 500, 395), fill=(150, 95, 50), outline=None)
    p.oval((140, 345, 500, 415), fill=(180, 120, 70), width=4)
    a = -0.6
    ca, sa = math.cos(a), math.sin(a)

    def tr(x, y):
        return (300 + x * ca - y * sa, 230 + x * sa + y * ca)

    p.poly([tr(0, -8), tr(260, -8), tr(260, 8), tr(0, 8)], fill=(190, 130, 70), width=3)
    p.poly([tr(-50, -45), tr(50, -45), tr(50, 45), tr(-50, 45)], fill=(170, 110, 60), width=4)
    p.poly([tr(-60, -50), tr(-50, -50), tr(-50, 50), tr(-60, 50)], fill=(220, 180, 80), width=2)
    p.poly([tr(50, -50), tr(60, -50), tr(60, 50), tr(50, 50)], fill=(220, 180, 80), width=2)
    # scales of justice in the corner
    p.line([(520, 60), (520, 180)], fill=(230, 190, 80), width=5)
    p.line([(460, 80), (580, 80)], fill=(230, 190, 80), width=5)
    for x in (460, 580):
        p.line([(x, 80), (x - 20, 130)], fill=(230, 190, 80), width=2)
        p.line([(x, 80), (x + 20, 130)], fill=(230, 190, 80), width=2)
        p.chord((x - 25, 110, x + 25, 150), 0, 180, fill=(230, 190, 80), outline=None)


def pol_vote_paper(p: Pen):
    p.hgrad((250, 230, 120), (250, 190, 90))
    p.rect((160, 40, 480, 440), fill=WHITE, width=4)
    for i in range(4):
        y = 90 + i * 85
        p.rect((190, y, 240, y + 50), fill=WHITE, width=4)
        p.rect((270, y + 15, 440, y + 25), fill=(150, 150, 150), outline=None)
        p.rect((270, y + 32, 400, y + 40), fill=(190, 190, 190), outline=None)
    p.line([(192, 200), (212, 225), (250, 160)], fill=(200, 30, 40), width=10)
    # pencil
    p.line([(470, 380), (590, 260)], fill=(240, 180, 40), width=26)
    p.poly([(470, 380), (452, 410), (483, 397)], fill=(230, 200, 150), outline=None)


def pol_protest(p: Pen):
    p.vgrad((255, 120, 90), (255, 200, 140))
    for i, (x, c) in enumerate(((60, (60, 60, 160)), (200, (30, 130, 80)), (340, (150, 40, 120)), (480, (40, 40, 40)))):
        y = 330 - (i % 2) * 30
        p.circle(x + 50, y, 28, fill=c, outline=None)
        p.chord((x, y + 25, x + 100, y + 200), 180, 360, fill=c, outline=None)
        p.rect((x, y + 110, x + 100, 480), fill=c, outline=None)
        p.line([(x + 80, y + 60), (x + 90, y - 170)], fill=(120, 80, 40), width=6)
        p.rect((x + 30, y - 250, x + 150, y - 160), fill=WHITE, width=3)
        p.rect((x + 45, y - 225, x + 135, y - 215), fill=(220, 40, 40), outline=None)
        p.rect((x + 45, y - 198, x + 115, y - 188), fill=BLACK, outline=None)
    # megaphone
    p.poly([(560, 80), (620, 40), (620, 160), (560, 120)], fill=(240, 240, 240), width=3)


def pol_hemicycle(p: Pen):
    p.fill((245, 245, 250))
    cols = [(220, 40, 40), (240, 130, 40), (240, 200, 40), (60, 170, 80), (40, 110, 210), (110, 60, 160)]
    cx, cy = 320, 380
    idx = 0
    for row, r in enumerate((120, 160, 200, 240, 280)):
        n = 9 + row * 4
        for i in range(n):
            a = math.pi + math.pi * i / (n - 1)
            c = cols[min(int(6 * i / n), 5)]
            p.circle(cx + r * math.cos(a), cy + r * math.sin(a), 11, fill=c, outline=None)
            idx += 1
    p.rect((270, 350, 370, 420), fill=(120, 80, 50), width=3)
    p.circle(320, 330, 16, fill=(60, 60, 60), outline=None)
    p.rect((0, 430, 640, 480), fill=(60, 70, 110), outline=None)


def pol_handshake_treaty(p: Pen):
    p.fill((30, 70, 60))
    p.rect((60, 260, 580, 300), fill=(130, 80, 45), width=3)
    p.rect((90, 300, 110, 470), fill=(110, 65, 35), outline=None)
    p.rect((530, 300, 550, 470), fill=(110, 65, 35), outline=None)
    p.rect((200, 210, 440, 262), fill=(250, 245, 225), width=3)
    for y in (222, 236):
        p.line([(215, y), (420, y)], fill=(150, 150, 150), width=2)
    p.line([(360, 252), (420, 248)], fill=(40, 40, 150), width=3)
    # two figures shaking hands over the table
    for x, c in ((140, (180, 60, 60)), (500, (60, 90, 180))):
        p.circle(x, 90, 36, fill=(230, 190, 150), outline=None)
        p.rrect((x - 55, 130, x + 55, 260), 20, fill=c, outline=None)
    p.line([(190, 170), (320, 150)], fill=(180, 60, 60), width=24)
    p.line([(450, 170), (320, 150)], fill=(60, 90, 180), width=24)
    p.circle(320, 150, 20, fill=(230, 190, 150), outline=None)
    _flag(p, 40, 30, 40, 28, [(220, 40, 40), WHITE], pole=False)
    _flag(p, 560, 30, 40, 28, [(40, 90, 200), (250, 210, 0)], pole=False, vertical=True)


# ---------------------------------------------------------------- science/technology


def sci_flask(p: Pen):
    p.fill((25, 35, 60))
    p.poly([(280, 60), (360, 60), (360, 190), (480, 420), (160, 420), (280, 190)], fill=(220, 235, 245), width=5)
    p.poly([(240, 270), (400, 270), (480, 420), (160, 420)], fill=(80, 220, 120), outline=None)
    p.poly([(280, 60), (360, 60), (360, 190), (480, 420), (160, 420), (280, 190)], fill=None, width=5)
    p.rect((270, 45, 370, 65), fill=(200, 210, 220), width=3)
    for x, y, r in (
        (300, 340, 14),
        (350, 370, 10),
        (260, 390, 9),
        (330, 300, 8),
        (320, 220, 10),
        (345, 150, 13),
        (310, 100, 16),
    ):
        p.circle(x, y, r, fill=(160, 255, 190), outline=None)
    p.rect((100, 420, 540, 440), fill=(90, 90, 100), outline=None)


def sci_rocket(p: Pen):
    p.vgrad((10, 10, 40), (40, 40, 110))
    for x, y in ((60, 60), (150, 200), (520, 80), (580, 240), (100, 330), (470, 380), (250, 40)):
        p.circle(x, y, 3, fill=WHITE, outline=None)
    p.circle(560, 400, 120, fill=(90, 140, 210), outline=None)
    p.poly([(320, 40), (370, 130), (370, 320), (270, 320), (270, 130)], fill=(235, 235, 240), width=4)
    p.poly([(320, 40), (370, 130), (270, 130)], fill=(220, 40, 40), width=4)
    p.circle(320, 190, 26, fill=(90, 180, 240), width=4)
    p.poly([(270, 250), (220, 340), (270, 320)], fill=(220, 40, 40), width=4)
    p.poly([(370, 250), (420, 340), (370, 320)], fill=(220, 40, 40), width=4)
    p.poly([(285, 320), (355, 320), (320, 450)], fill=(255, 170, 40), outline=None)
    p.poly([(300, 320), (340, 320), (320, 400)], fill=(255, 240, 120), outline=None)


def sci_atom(p: Pen):
    p.fill((240, 245, 255))
    c = (60, 80, 200)
    cx, cy = 320, 240
    for ang in (0, 60, 120):
        a = math.radians(ang)
        pts = []
        for i in range(73):
            t = 2 * math.pi * i / 72
            x, y = 200 * math.cos(t), 70 * math.sin(t)
            pts.append((cx + x * math.cos(a) - y * math.sin(a), cy + x * math.sin(a) + y * math.cos(a)))
        p.line(pts, fill=c, width=6)
        p.circle(cx + 200 * math.cos(a), cy + 200 * math.sin(a), 14, fill=(240, 80, 80), outline=None)
    p.circle(cx, cy, 36, fill=(250, 180, 40), outline=None)


def sci_microscope(p: Pen):
    p.vgrad((230, 250, 240), (180, 220, 210))
    c = (70, 70, 90)
    p.rrect((170, 400, 470, 440), 12, fill=c, outline=None)
    p.line([(400, 400), (420, 260), (380, 150)], fill=c, width=30)
    p.rect((250, 300, 430, 320), fill=c, outline=None)
    p.poly([(300, 60), (345, 40), (400, 250), (355, 270)], fill=(230, 230, 240), width=4)
    p.poly([(292, 40), (340, 20), (350, 50), (302, 70)], fill=(60, 60, 70), outline=None)
    p.poly([(350, 265), (390, 250), (395, 290), (360, 300)], fill=(60, 60, 70), outline=None)
    p.rect((280, 290, 340, 298), fill=(120, 200, 240), outline=None)
    p.circle(450, 230, 26, fill=(150, 150, 170), width=3)
    # petri dish
    p.oval((60, 380, 160, 420), fill=(220, 240, 250), width=3)
    p.circle(100, 398, 8, fill=(120, 200, 100), outline=None)


def sci_laptop(p: Pen):
    p.vgrad((40, 50, 70), (90, 100, 130))
    p.rrect((140, 80, 500, 320), 16, fill=(50, 50, 60), width=4)
    p.rect((160, 100, 480, 300), fill=(20, 30, 40), outline=None)
    for i, (w, c) in enumerate(
        (
            (180, (100, 230, 130)),
            (120, (250, 200, 80)),
            (220, (120, 180, 250)),
            (90, (240, 120, 160)),
            (160, (100, 230, 130)),
            (200, (120, 180, 250)),
        )
    ):
        x0 = 180 + (i % 3) * 20
        p.rect((x0, 120 + i * 28, x0 + w, 132 + i * 28), fill=c, outline=None)
    p.poly([(100, 320), (540, 320), (600, 400), (40, 400)], fill=(180, 185, 195), width=4)
    for r in range(3):
        for k in range(10):
            x = 120 + r * 10 + k * 40
            p.rect((x, 330 + r * 18, x + 30, 342 + r * 18), fill=(110, 115, 125), outline=None)
    p.rect((270, 384, 370, 396), fill=(140, 145, 155), outline=None)


def sci_dna(p: Pen):
    p.hgrad((20, 20, 50), (60, 20, 80))
    n = 40
    for i in range(n):
        y = 20 + i * 11
        t = i * 0.33
        x1 = 320 + 140 * math.sin(t)
        x2 = 320 - 140 * math.sin(t)
        if i % 3 == 0:
            p.line([(x1, y), (x2, y)], fill=(200, 200, 220), width=4)
    for phase, c in ((0, (60, 200, 250)), (math.pi, (250, 90, 160))):
        pts = [(320 + 140 * math.sin(i * 0.33 + phase), 20 + i * 11) for i in range(n)]
        p.line(pts, fill=c, width=12)


def sci_robot(p: Pen):
    p.checker((220, 230, 240), (205, 215, 230), n=8)
    c = (150, 160, 175)
    p.line([(320, 60), (320, 100)], width=5)
    p.circle(320, 55, 12, fill=(230, 60, 60), width=3)
    p.rrect((230, 100, 410, 210), 18, fill=c, width=4)
    p.circle(280, 150, 22, fill=(80, 210, 250), width=3)
    p.circle(360, 150, 22, fill=(80, 210, 250), width=3)
    p.rect((290, 185, 350, 195), fill=(60, 60, 70), outline=None)
    p.rrect((210, 220, 430, 390), 14, fill=c, width=4)
    p.rect((270, 250, 370, 320), fill=(90, 100, 120), width=3)
    for i, col in enumerate(((90, 220, 90), (250, 200, 60), (230, 70, 70))):
        p.circle(295 + i * 25, 285, 9, fill=col, outline=None)
    p.line([(210, 240), (150, 320), (170, 380)], fill=c, width=22)
    p.line([(430, 240), (490, 320), (470, 380)], fill=c, width=22)
    p.rect((250, 390, 290, 460), fill=c, width=3)
    p.rect((350, 390, 390, 460), fill=c, width=3)


def sci_satellite(p: Pen):
    p.fill((5, 5, 25))
    for x, y in ((40, 40), (600, 60), (500, 420), (80, 300), (300, 450), (220, 30), (560, 200)):
        p.circle(x, y, 2, fill=WHITE, outline=None)
    p.chord((-200, 360, 840, 900), 180, 360, fill=(50, 110, 200), outline=None)
    p.chord((100, 380, 400, 500), 180, 360, fill=(70, 160, 90), outline=None)
    p.rect((280, 170, 360, 250), fill=(220, 190, 80), width=4)
    for side in (-1, 1):
        x0 = 280 - 190 if side < 0 else 360 + 10
        p.line([(280 if side < 0 else 360, 210), (x0 + (180 if side < 0 else 0), 210)], width=5)
        p.rect((x0, 175, x0 + 180, 245), fill=(40, 70, 160), width=3)
        for k in range(1, 6):
            p.line([(x0 + k * 30, 175), (x0 + k * 30, 245)], fill=(140, 170, 230), width=2)
        p.line([(x0, 210), (x0 + 180, 210)], fill=(140, 170, 230), width=2)
    p.chord((290, 110, 350, 170), 180, 360, fill=(220, 220, 230), width=3)
    p.line([(320, 140), (320, 95)], width=3)


def sci_chip(p: Pen):
    p.fill((20, 110, 60))
    for i in range(10):
        y = 30 + i * 45
        p.line([(0, y), (120, y), (150, y + 20)], fill=(200, 170, 60), width=3)
        p.line([(640, y), (520, y), (490, y + 20)], fill=(200, 170, 60), width=3)
        p.circle(120, y, 5, fill=(200, 170, 60), outline=None)
    p.rect((200, 120, 440, 360), fill=(30, 30, 35), width=3)
    for i in range(8):
        x = 215 + i * 28
        p.rect((x, 95, x + 12, 120), fill=(200, 200, 210), outline=None)
        p.rect((x, 360, x + 12, 385), fill=(200, 200, 210), outline=None)
        y = 135 + i * 28
        p.rect((175, y, 200, y + 12), fill=(200, 200, 210), outline=None)
        p.rect((440, y, 465, y + 12), fill=(200, 200, 210), outline=None)
    p.circle(230, 150, 8, fill=(90, 90, 100), outline=None)
    p.rect((260, 180, 380, 300), fill=(60, 60, 70), outline=None)


def sci_telescope(p: Pen):
    p.vgrad((10, 20, 60), (60, 40, 100))
    p.circle(520, 90, 50, fill=(250, 250, 220), outline=None)
    p.circle(540, 80, 48, fill=(40, 40, 90), outline=None)
    for x, y in ((80, 60), (200, 110), (320, 40), (420, 150), (600, 200), (140, 220)):
        p.star(x, y, 10, (255, 240, 150), outline=None)
    p.rect((0, 400, 640, 480), fill=(30, 50, 40), outline=None)
    a = -0.6
    ca, sa = math.cos(a), math.sin(a)

    def tr(x, y):
        return (300 + x * ca - y * sa, 280 + x * sa + y * ca)

    p.poly([tr(-120, -22), tr(130, -35), tr(130, 35), tr(-120, 22)], fill=(220, 220, 230), width=4)
    p.poly([tr(130, -40), tr(150, -40), tr(150, 40), tr(130, 40)], fill=(90, 90, 110), width=3)
    p.line([(300, 285), (240, 420)], fill=(160, 160, 170), width=7)
    p.line([(300, 285), (360, 420)], fill=(160, 160, 170), width=7)
    p.line([(300, 285), (300, 420)], fill=(160, 160, 170), width=7)


# ---------------------------------------------------------------- sports


def spo_ball_goal(p: Pen):
    p.vgrad((120, 190, 250), (200, 230, 255), 0, 250)
    p.rect((0, 250, 640, 480), fill=(60, 160, 70), outline=None)
    for i in range(0, 640, 80):
        p.rect((i, 250, i + 40, 480), fill=(70, 175, 80), outline=None)
    p.line([(120, 300), (120, 110), (520, 110), (520, 300)], fill=WHITE, width=10, joint=None)
    for x in range(140, 520, 25):
        p.line([(x, 110), (x + 10, 280)], fill=(230, 230, 230), width=2)
    for y in range(130, 290, 25):
        p.line([(120, y), (520, y)], fill=(230, 230, 230), width=2)
    p.line([(0, 300), (640, 300)], fill=WHITE, width=4)
    _ball_soccer(p, 420, 390, 55)


def spo_basketball(p: Pen):
    p.fill((240, 160, 70))
    p.stripes((220, 150, 80), (200, 130, 60), n=10)
    p.rect((360, 40, 600, 200), fill=WHITE, width=5)
    p.rect((430, 110, 530, 180), fill=None, outline=(220, 40, 40), width=5)
    p.oval((420, 190, 540, 215), fill=None, outline=(230, 80, 20), width=7)
    for k in range(6):
        p.line([(425 + k * 22, 205), (440 + k * 16, 280)], fill=WHITE, width=3)
    cx, cy, r = 220, 330, 110
    p.circle(cx, cy, r, fill=(230, 110, 30), width=5)
    p.line([(cx - r, cy), (cx + r, cy)], width=5)
    p.line([(cx, cy - r), (cx, cy + r)], width=5)
    p.arc((cx - r - 60, cy - r, cx - 10, cy + r), -60, 60, width=5)
    p.arc((cx + 10, cy - r, cx + r + 60, cy + r), 120, 240, width=5)


def spo_tennis(p: Pen):
    p.fill((40, 110, 200))
    p.rect((0, 330, 640, 480), fill=(70, 150, 220), outline=None)
    p.line([(0, 330), (640, 330)], fill=WHITE, width=6)
    p.line([(320, 330), (320, 480)], fill=WHITE, width=6)
    p.oval((120, 60, 340, 310), fill=None, outline=(220, 40, 40), width=14)
    for x in range(150, 320, 22):
        p.line([(x, 70), (x, 300)], fill=(240, 240, 240), width=2)
    for y in range(85, 300, 22):
        p.line([(125, y), (335, y)], fill=(240, 240, 240), width=2)
    p.oval((120, 60, 340, 310), fill=None, outline=(220, 40, 40), width=14)
    p.line([(300, 290), (420, 440)], fill=(60, 60, 60), width=26)
    p.circle(490, 170, 48, fill=(210, 240, 60), width=3)
    p.arc((450, 120, 520, 220), 280, 80, fill=WHITE, width=5)


def spo_track(p: Pen):
    p.fill((200, 70, 50))
    for i in range(7):
        y = 60 + i * 55
        p.line([(0, y + 120), (640, y - 40)], fill=WHITE, width=4)
    for i in range(6):
        y = 88 + i * 55
        p.rect((60, y + 100 - 15, 85, y + 100 + 15), fill=WHITE, outline=None)
    # runner silhouette
    c = (20, 20, 30)
    p.circle(430, 100, 28, fill=c, outline=None)
    p.line([(420, 130), (390, 230)], fill=c, width=26)
    p.line([(415, 150), (470, 190), (500, 160)], fill=c, width=14)
    p.line([(410, 150), (360, 180), (340, 220)], fill=c, width=14)
    p.line([(390, 230), (450, 280), (440, 340)], fill=c, width=16)
    p.line([(390, 230), (340, 290), (280, 290)], fill=c, width=16)


def spo_trophy(p: Pen):
    p.rays(320, 200, (40, 60, 140), (30, 45, 110), n=24)
    gold = (240, 190, 40)
    p.chord((190, 10, 450, 300), 0, 180, fill=gold, width=4)
    p.rect((190, 80, 450, 160), fill=gold, outline=None)
    p.line([(190, 80), (190, 160)], width=4)
    p.line([(450, 80), (450, 160)], width=4)
    p.line([(190, 80), (450, 80)], width=4)
    p.arc((120, 90, 210, 210), 90, 270, fill=gold, width=14)
    p.arc((430, 90, 520, 210), 270, 90, fill=gold, width=14)
    p.rect((300, 300, 340, 350), fill=gold, width=3)
    p.rect((240, 350, 400, 380), fill=gold, width=3)
    p.rect((210, 380, 430, 430), fill=(90, 60, 40), width=3)
    p.star(320, 190, 38, WHITE, outline=None)


def spo_podium(p: Pen):
    p.vgrad((250, 250, 255), (200, 210, 230))
    p.rect((230, 220, 410, 440), fill=(240, 190, 40), width=4)
    p.rect((50, 290, 230, 440), fill=(190, 195, 205), width=4)
    p.rect((410, 330, 590, 440), fill=(200, 130, 70), width=4)
    for x, y, n in ((320, 330, 1), (140, 370, 2), (500, 390, 3)):
        for k in range(n):
            p.rect((x - 6 * n + k * 12 - 3, y - 30, x - 6 * n + k * 12 + 5, y + 30), fill=BLACK, outline=None)
    for x, top, c in ((320, 220, (220, 40, 40)), (140, 290, (40, 90, 200)), (500, 330, (40, 150, 70))):
        p.circle(x, top - 110, 26, fill=c, outline=None)
        p.rrect((x - 32, top - 80, x + 32, top), 14, fill=c, outline=None)
    p.line([(290, 150), (250, 60)], fill=(220, 40, 40), width=14)
    p.line([(350, 150), (390, 60)], fill=(220, 40, 40), width=14)
    p.rect((0, 440, 640, 480), fill=(120, 120, 130), outline=None)


def spo_bicycle(p: Pen):
    p.vgrad((255, 230, 160), (255, 250, 230), 0, 380)
    p.rect((0, 380, 640, 480), fill=(130, 130, 135), outline=None)
    for cx in (170, 470):
        p.circle(cx, 300, 100, fill=None, width=10)
        for k in range(8):
            a = math.pi * k / 8
            p.line(
                [(cx - 95 * math.cos(a), 300 - 95 * math.sin(a)), (cx + 95 * math.cos(a), 300 + 95 * math.sin(a))],
                fill=(120, 120, 120),
                width=2,
            )
    c = (30, 120, 220)
    p.line([(170, 300), (300, 300), (420, 170), (250, 170), (170, 300)], fill=c, width=12)
    p.line([(300, 300), (240, 140)], fill=c, width=12)
    p.line([(420, 170), (470, 300)], fill=c, width=12)
    p.rrect((205, 125, 280, 145), 8, fill=BLACK, outline=None)
    p.line([(420, 170), (410, 130), (450, 120)], fill=BLACK, width=10)
    p.circle(300, 300, 22, fill=(80, 80, 80), outline=None)


def spo_swimming(p: Pen):
    p.fill((30, 150, 220))
    for y in (90, 390):
        for x in range(0, 640, 32):
            p.circle(x + 16, y, 10, fill=(230, 60, 60) if (x // 32) % 2 == 0 else WHITE, outline=None)
    for j in range(7):
        y = 30 + j * 70
        for x in range(0 + (j % 2) * 30, 640, 60):
            p.arc((x, y - 8, x + 30, y + 8), 200, 340, fill=(140, 210, 250), width=3)
    # swimmer doing front crawl: cap, goggles, one arm up out of the water, splash
    skin = (235, 185, 150)
    p.oval((150, 215, 470, 265), fill=(20, 110, 180), outline=None)
    p.line([(230, 240), (450, 240)], fill=skin, width=30)
    p.circle(420, 230, 34, fill=(240, 60, 60), outline=None)
    p.rect((418, 222, 458, 232), fill=BLACK, outline=None)
    p.line([(360, 235), (330, 140), (420, 120)], fill=skin, width=22)
    p.line([(230, 245), (160, 250)], fill=skin, width=22)
    for x, y, r in ((470, 250, 14), (490, 235, 9), (150, 260, 12), (130, 245, 8), (435, 120, 10)):
        p.circle(x, y, r, fill=WHITE, outline=None)
    p.rect((560, 0, 640, 40), fill=(250, 210, 0), width=2)
    p.rect((0, 440, 640, 480), fill=(240, 240, 240), outline=None)


def spo_medal(p: Pen):
    p.hgrad((120, 20, 40), (40, 10, 60))
    p.poly([(230, 0), (300, 0), (340, 230), (290, 230)], fill=(40, 90, 200), outline=None)
    p.poly([(410, 0), (340, 0), (300, 230), (350, 230)], fill=(220, 40, 40), outline=None)
    p.circle(320, 320, 110, fill=(245, 195, 40), width=5)
    p.circle(320, 320, 80, fill=None, outline=(200, 150, 20), width=5)
    p.star(320, 320, 60, (255, 230, 120), outline=(200, 150, 20))
    p.rect((295, 200, 345, 220), fill=(200, 150, 20), outline=None)


def spo_pitch(p: Pen):
    p.fill((40, 130, 50))
    for i in range(8):
        p.rect((i * 80, 0, i * 80 + 40, 480), fill=(50, 145, 60), outline=None)
    p.rect((40, 40, 600, 440), fill=None, outline=WHITE, width=5)
    p.line([(320, 40), (320, 440)], fill=WHITE, width=5)
    p.circle(320, 240, 70, fill=None, outline=WHITE, width=5)
    p.rect((40, 150, 130, 330), fill=None, outline=WHITE, width=5)
    p.rect((510, 150, 600, 330), fill=None, outline=WHITE, width=5)
    p.rect((20, 210, 40, 270), fill=None, outline=WHITE, width=4)
    p.rect((600, 210, 620, 270), fill=None, outline=WHITE, width=4)
    for x, y, c in (
        (200, 140, (220, 40, 40)),
        (250, 330, (220, 40, 40)),
        (420, 180, (40, 80, 220)),
        (450, 320, (40, 80, 220)),
        (560, 240, (240, 200, 0)),
    ):
        p.circle(x, y, 13, fill=c, width=2)
    _ball_soccer(p, 350, 250, 12)


# ---------------------------------------------------------------- travel


def tra_plane_suitcase(p: Pen):
    p.vgrad((70, 150, 230), (180, 220, 250))
    _cloud(p, 60, 340, 1.4)
    _cloud(p, 430, 60, 1.1)
    _plane(p, 330, 170, 1.1, angle=-0.35)
    _suitcase(p, 80, 330, 180, 120, c=(230, 120, 40))


def tra_suitcase_stickers(p: Pen):
    p.fill((250, 240, 220))
    p.checker((250, 240, 220), (240, 225, 200), n=6)
    _suitcase(p, 160, 150, 320, 260, c=(40, 120, 160), stickers=False)
    p.circle(250, 230, 36, fill=(250, 200, 60), outline=None)
    p.rect((370, 200, 440, 250), fill=(230, 70, 90), outline=None)
    p.star(400, 340, 32, WHITE, outline=None)
    p.rrect((210, 320, 290, 370), 8, fill=(120, 200, 110), outline=None)
    p.circle(200, 430, 18, fill=BLACK, outline=None)
    p.circle(440, 430, 18, fill=BLACK, outline=None)
    # luggage tag
    p.line([(480, 190), (540, 220)], width=3)
    p.rect((530, 205, 600, 250), fill=(250, 220, 80), width=3)


def tra_passport(p: Pen):
    p.fill((200, 180, 150))
    a = 0.12
    p.poly([(90 + 0, 80), (330, 80 - 30 * a), (330, 420), (90, 420)], fill=(120, 20, 40), width=4)
    p.circle(210, 220, 60, fill=None, outline=(230, 190, 80), width=5)
    p.line([(150, 220), (270, 220)], fill=(230, 190, 80), width=3)
    p.oval((180, 160, 240, 280), fill=None, outline=(230, 190, 80), width=3)
    p.rect((150, 320, 270, 336), fill=(230, 190, 80), outline=None)
    # boarding pass
    p.rect((300, 200, 600, 330), fill=WHITE, width=3)
    p.rect((300, 200, 600, 235), fill=(30, 110, 200), outline=None)
    _plane(p, 360, 285, 0.25, c=(30, 110, 200))
    p.rect((410, 260, 520, 270), fill=BLACK, outline=None)
    p.rect((410, 290, 490, 300), fill=BLACK, outline=None)
    for i in range(10):
        p.rect((535 + i * 5, 250, 537 + i * 5, 315), fill=BLACK, outline=None)


def tra_train(p: Pen):
    p.vgrad((250, 210, 170), (200, 230, 250), 0, 340)
    _mountains(p, 340, ((120, 180, 150), (480, 220, 190)), c=(150, 150, 170))
    p.rect((0, 340, 640, 480), fill=(150, 190, 110), outline=None)
    p.rect((0, 410, 640, 420), fill=(90, 70, 60), outline=None)
    for x in range(0, 640, 30):
        p.rect((x, 405, x + 14, 425), fill=(120, 90, 70), outline=None)
    p.rrect((60, 250, 300, 400), 20, fill=(200, 40, 40), width=4)
    p.rect((320, 270, 600, 400), fill=(200, 40, 40), width=4)
    for x in (90, 160, 230):
        p.rect((x, 270, x + 50, 320), fill=(200, 230, 250), width=3)
    for x in (340, 410, 480, 545):
        p.rect((x, 290, x + 45, 330), fill=(200, 230, 250), width=3)
    p.rect((60, 350, 600, 365), fill=(250, 220, 60), outline=None)
    for x in (100, 250, 370, 550):
        p.circle(x, 405, 16, fill=BLACK, outline=None)


def tra_beach(p: Pen):
    p.vgrad((90, 190, 250), (180, 230, 255), 0, 240)
    _sun(p, 540, 70, 35)
    p.rect((0, 240, 640, 320), fill=(20, 140, 200), outline=None)
    p.rect((0, 320, 640, 480), fill=(245, 220, 160), outline=None)
    p.line([(250, 460), (300, 230)], fill=(120, 90, 60), width=7)
    p.pie((150, 170, 450, 370), 180, 360, fill=(250, 80, 80), width=3)
    for k in range(1, 5):
        a = math.pi + math.pi * k / 5
        p.line([(300, 270), (300 + 150 * math.cos(a), 270 + 100 * math.sin(a))], fill=WHITE, width=4)
    p.rect((360, 400, 520, 440), fill=(80, 180, 230), width=2)
    p.circle(120, 420, 32, fill=(250, 230, 60), width=3)
    p.chord((88, 388, 152, 452), 90, 270, fill=(240, 90, 90), outline=None)


def tra_balloon(p: Pen):
    p.vgrad((250, 150, 100), (130, 180, 240))
    _cloud(p, 460, 330, 1.5)
    _cloud(p, 60, 120, 1.0)
    cx, cy = 300, 190
    cols = [(230, 50, 50), (250, 200, 40), (40, 140, 220), (250, 200, 40), (230, 50, 50)]
    for i, c in enumerate(cols):
        w = 130 - abs(i - 2) * 48
        p.oval((cx - w, cy - 140, cx + w, cy + 140), fill=c, outline=None)
    p.oval((cx - 130, cy - 140, cx + 130, cy + 140), fill=None, width=4)
    p.line([(cx - 90, cy + 110), (cx - 25, 390)], width=3)
    p.line([(cx + 90, cy + 110), (cx + 25, 390)], width=3)
    p.rect((cx - 30, 390, cx + 30, 440), fill=(150, 100, 50), width=3)


def tra_ship(p: Pen):
    p.vgrad((130, 200, 240), (220, 240, 255), 0, 300)
    p.vgrad((30, 90, 160), (10, 50, 110), 300, 480)
    p.poly([(60, 270), (580, 270), (520, 370), (110, 370)], fill=(30, 40, 80), width=3)
    p.rect((60, 300, 580, 312), fill=(220, 40, 40), outline=None)
    p.rect((140, 200, 500, 270), fill=WHITE, width=3)
    p.rect((200, 150, 440, 200), fill=WHITE, width=3)
    for x in range(160, 490, 35):
        p.circle(x + 10, 235, 9, fill=(80, 150, 220), outline=None)
    for x in range(220, 430, 35):
        p.rect((x, 165, x + 20, 185), fill=(80, 150, 220), outline=None)
    p.rect((320, 90, 370, 150), fill=(240, 160, 40), width=3)
    p.rect((320, 90, 370, 105), fill=BLACK, outline=None)
    for x, y in ((400, 60), (430, 40), (460, 25)):
        p.circle(x, y, 14, fill=(200, 200, 210), outline=None)
    for x in range(0, 640, 70):
        p.arc((x, 400, x + 50, 420), 200, 340, fill=(180, 220, 255), width=3)


def tra_hotel_bed(p: Pen):
    p.fill((90, 60, 110))
    p.rect((0, 330, 640, 480), fill=(170, 120, 80), outline=None)
    p.rect((440, 40, 600, 200), fill=(40, 40, 90), width=6)
    p.circle(550, 90, 25, fill=(250, 250, 210), outline=None)
    p.line([(520, 40), (520, 200)], fill=(200, 180, 150), width=4)
    p.rect((80, 150, 120, 400), fill=(130, 80, 40), width=3)
    p.rect((80, 250, 460, 360), fill=WHITE, width=4)
    p.rect((200, 250, 460, 360), fill=(80, 140, 210), width=4)
    p.rrect((120, 220, 200, 260), 14, fill=WHITE, width=3)
    p.rect((440, 280, 480, 400), fill=(130, 80, 40), width=3)
    # bellhop sign: key with tag
    p.circle(250, 100, 24, fill=None, outline=(240, 200, 60), width=8)
    p.line([(274, 100), (350, 100)], fill=(240, 200, 60), width=8)
    p.line([(330, 100), (330, 120)], fill=(240, 200, 60), width=6)
    p.line([(345, 100), (345, 118)], fill=(240, 200, 60), width=6)


def tra_camper(p: Pen):
    p.vgrad((150, 210, 250), (250, 240, 200), 0, 330)
    _mountains(p, 330, ((100, 170, 160), (300, 200, 200), (560, 160, 170)), c=(100, 140, 120), snow=(230, 240, 250))
    p.rect((0, 330, 640, 480), fill=(120, 110, 100), outline=None)
    for x in range(0, 640, 100):
        p.rect((x, 400, x + 50, 408), fill=(250, 230, 100), outline=None)
    p.rrect((150, 230, 480, 380), 30, fill=(250, 245, 230), width=4)
    p.rect((150, 300, 480, 330), fill=(40, 160, 150), outline=None)
    p.rect((400, 250, 460, 295), fill=(160, 210, 240), width=3)
    p.rect((190, 250, 260, 295), fill=(160, 210, 240), width=3)
    p.rect((290, 250, 340, 360), fill=(230, 220, 200), width=3)
    for x in (230, 410):
        p.circle(x, 380, 32, fill=(40, 40, 40), outline=None)
        p.circle(x, 380, 12, fill=(190, 190, 190), outline=None)
    p.rect((200, 200, 420, 230), fill=None, width=4)
    _suitcase(p, 230, 195, 60, 35, c=(220, 120, 40), stickers=False)
    _suitcase(p, 320, 190, 70, 40, c=(160, 60, 160), stickers=False)


def tra_map_pin_landmark(p: Pen):
    p.vgrad((200, 230, 220), (250, 240, 220))
    # tower landmark
    c = (90, 80, 80)
    p.poly(
        [(320, 40), (345, 180), (400, 420), (360, 420), (320, 300), (280, 420), (240, 420), (295, 180)],
        fill=c,
        outline=None,
    )
    p.rect((285, 170, 355, 185), fill=c, outline=None)
    p.rect((265, 290, 375, 305), fill=c, outline=None)
    p.rect((0, 420, 640, 480), fill=(110, 170, 90), outline=None)
    # big map pin
    p.circle(500, 170, 70, fill=(230, 50, 60), width=4)
    p.poly([(440, 205), (560, 205), (500, 330)], fill=(230, 50, 60), outline=None)
    p.circle(500, 170, 28, fill=WHITE, outline=None)
    # dashed route
    for i in range(8):
        x = 60 + i * 22
        p.line([(x, 400 - i * 24), (x + 10, 390 - i * 24)], fill=(230, 50, 60), width=5)
    _plane(p, 150, 90, 0.35, angle=-0.6)


def geo_canyon(p: Pen):
    p.vgrad((250, 180, 120), (250, 225, 180), 0, 200)
    _sun(p, 320, 120, 40, c=(255, 240, 160))
    p.poly([(0, 120), (140, 110), (180, 160), (230, 170), (250, 480), (0, 480)], fill=(190, 90, 50), outline=None)
    p.poly([(640, 100), (480, 120), (450, 170), (400, 180), (380, 480), (640, 480)], fill=(170, 80, 45), outline=None)
    for y in (200, 260, 320, 380):
        p.line([(0, y), (235, y + 10)], fill=(150, 65, 35), width=5)
        p.line([(640, y - 10), (395, y)], fill=(140, 60, 30), width=5)
    p.poly([(230, 170), (400, 180), (380, 480), (250, 480)], fill=(220, 140, 90), outline=None)
    p.poly([(300, 300), (330, 300), (350, 380), (300, 480), (260, 480), (310, 380)], fill=(60, 140, 200), outline=None)


def pol_campaign_poster(p: Pen):
    p.fill((210, 210, 205))
    p.stripes((205, 200, 195), (190, 185, 180), n=16, vertical=False)
    p.rect((130, 50, 510, 430), fill=(20, 60, 150), width=5)
    p.rect((130, 330, 510, 430), fill=(220, 40, 50), outline=None)
    p.circle(320, 170, 62, fill=(240, 210, 170), outline=None)
    p.chord((210, 230, 430, 430), 180, 360, fill=(40, 40, 50), outline=None)
    p.poly([(305, 235), (335, 235), (320, 300)], fill=(220, 40, 50), outline=None)
    for i in range(5):
        p.star(175 + i * 72, 380, 24, WHITE, outline=None)
    p.rect((130, 50, 510, 430), fill=None, width=5)
    # rosette
    p.poly([(520, 330), (545, 440), (565, 400), (590, 440), (600, 330)], fill=(40, 90, 200), outline=None)
    p.circle(560, 310, 45, fill=(250, 200, 40), width=3)
    p.circle(560, 310, 25, fill=(220, 40, 50), outline=None)


# ---------------------------------------------------------------- registry


@dataclass(frozen=True)
class Pictogram:
    title: str
    draw: Callable[[Pen], None]


PICTOGRAMS: dict[str, tuple[Pictogram, ...]] = {
    "entertainment": (
        Pictogram("Film reel and film strip", ent_film_reel),
        Pictogram("Theatre stage with curtains and spotlight", ent_stage),
        Pictogram("Comedy and tragedy masks", ent_masks),
        Pictogram("Box of popcorn", ent_popcorn),
        Pictogram("Film clapperboard", ent_clapper),
        Pictogram("Microphone and music notes", ent_microphone),
        Pictogram("Acoustic guitar", ent_guitar),
        Pictogram("Television set", ent_tv),
        Pictogram("Show tickets", ent_tickets),
        Pictogram("Film projector", ent_camera),
    ),
    "geography": (
        Pictogram("Mountains and river", geo_mountains_river),
        Pictogram("Globe", geo_globe),
        Pictogram("Map with compass rose", geo_map_compass),
        Pictogram("Island with palm tree", geo_island),
        Pictogram("Volcano", geo_volcano),
        Pictogram("Desert dunes and cactus", geo_desert),
        Pictogram("Lake and forest", geo_lake_forest),
        Pictogram("Waterfall in a gorge", geo_waterfall),
        Pictogram("Coast with cliffs and lighthouse", geo_coast_cliffs),
        Pictogram("Canyon with river", geo_canyon),
    ),
    "health": (
        Pictogram("Red cross", hea_red_cross),
        Pictogram("Stethoscope", hea_stethoscope),
        Pictogram("Pill bottle and capsules", hea_pills),
        Pictogram("Syringe", hea_syringe),
        Pictogram("Heart and heartbeat line", hea_heart_ecg),
        Pictogram("Hospital building", hea_hospital),
        Pictogram("First-aid kit", hea_first_aid),
        Pictogram("Thermometer", hea_thermometer),
        Pictogram("Ambulance", hea_ambulance),
        Pictogram("Tooth and toothbrush", hea_tooth_brush),
    ),
    "politics": (
        Pictogram("Ballot box", pol_ballot_box),
        Pictogram("Parliament building with dome", pol_capitol),
        Pictogram("Speaker's podium with flags", pol_podium),
        Pictogram("National flags", pol_flags),
        Pictogram("Gavel and scales of justice", pol_gavel),
        Pictogram("Ballot paper with a cross", pol_vote_paper),
        Pictogram("Demonstrators with placards", pol_protest),
        Pictogram("Parliament seating chart", pol_hemicycle),
        Pictogram("Leaders signing a treaty", pol_handshake_treaty),
        Pictogram("Election campaign poster", pol_campaign_poster),
    ),
    "science/technology": (
        Pictogram("Laboratory flask", sci_flask),
        Pictogram("Rocket", sci_rocket),
        Pictogram("Atom model", sci_atom),
        Pictogram("Microscope", sci_microscope),
        Pictogram("Laptop computer with code", sci_laptop),
        Pictogram("DNA double helix", sci_dna),
        Pictogram("Robot", sci_robot),
        Pictogram("Satellite over the Earth", sci_satellite),
        Pictogram("Microchip on a circuit board", sci_chip),
        Pictogram("Telescope under the stars", sci_telescope),
    ),
    "sports": (
        Pictogram("Football and goal", spo_ball_goal),
        Pictogram("Basketball and hoop", spo_basketball),
        Pictogram("Tennis racket and ball", spo_tennis),
        Pictogram("Sprinter on a running track", spo_track),
        Pictogram("Trophy cup", spo_trophy),
        Pictogram("Winners' podium", spo_podium),
        Pictogram("Racing bicycle", spo_bicycle),
        Pictogram("Swimmer in a pool", spo_swimming),
        Pictogram("Gold medal", spo_medal),
        Pictogram("Football pitch from above", spo_pitch),
    ),
    "travel": (
        Pictogram("Aeroplane and suitcase", tra_plane_suitcase),
        Pictogram("Suitcase with travel stickers", tra_suitcase_stickers),
        Pictogram("Passport and boarding pass", tra_passport),
        Pictogram("Train in the mountains", tra_train),
        Pictogram("Beach with parasol", tra_beach),
        Pictogram("Hot-air balloon", tra_balloon),
        Pictogram("Cruise ship", tra_ship),
        Pictogram("Hotel room", tra_hotel_bed),
        Pictogram("Camper van with luggage", tra_camper),
        Pictogram("Landmark, map pin and route", tra_map_pin_landmark),
    ),
}

PNG_SAVE_OPTIONS = {"format": "PNG", "optimize": False, "compress_level": 9}


def render(topic: str, n: int):
    """Draw pictogram ``n`` of ``topic`` as a 640x480 RGB PIL image."""
    from PIL import Image

    pic = PICTOGRAMS[topic][n]
    img = Image.new("RGB", (WIDTH * SCALE, HEIGHT * SCALE), WHITE)
    pic.draw(Pen(img))
    return img.resize((WIDTH, HEIGHT), Image.Resampling.LANCZOS)


def png_bytes(img) -> bytes:
    """PNG bytes with fixed settings and no metadata chunks (no time, text or ICC)."""
    import io

    buf = io.BytesIO()
    img.save(buf, **PNG_SAVE_OPTIONS)
    return buf.getvalue()


def write_demo_pool(out: str | Path, *, progress: bool = True) -> Path:
    """Draw all pictograms into ``out`` with a manifest; returns the manifest path.

    Files are written atomically one by one and the manifest last, so an interrupted run
    never leaves a manifest that names missing files.
    """
    import hashlib

    from tqdm import tqdm

    from mvlsib.atomic import atomic_open
    from mvlsib.workdir.pool_manifest import ManifestRow, write_manifest

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(t, n) for t in TOPICS for n in range(len(PICTOGRAMS[t]))]
    rows = []
    for topic, n in tqdm(jobs, desc="drawing pictograms", unit="img", disable=not progress, file=None):
        slug = topic_slug(topic)
        rel = f"{slug}/{slug}_{n}.png"
        data = png_bytes(render(topic, n))
        with atomic_open(out / rel, "wb") as fh:
            fh.write(data)
        rows.append(
            ManifestRow(
                image_id=f"{slug}_{n}",
                topic=topic,
                file=rel,
                license=LICENSE,
                author=AUTHOR,
                source_url=SOURCE_URL,
                sha256=hashlib.sha256(data).hexdigest(),
                extra={"title": PICTOGRAMS[topic][n].title},
            )
        )
    return write_manifest(out, rows)
