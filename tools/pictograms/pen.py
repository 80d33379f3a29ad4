"""The drawing surface: a 640x480 canvas drawn at twice the size, and the pen that scales coordinates."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from PIL import ImageDraw

WIDTH, HEIGHT = 640, 480
SCALE = 2  # drawn at 2x, downsampled with LANCZOS for smooth edges


Color = tuple[int, int, int]
BLACK: Color = (30, 30, 35)
WHITE: Color = (255, 255, 255)


class Pen:
    """ImageDraw wrapper taking coordinates in output pixels (640x480) and scaling them."""

    def __init__(self, img):
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


@dataclass(frozen=True)
class Pictogram:
    title: str
    draw: Callable[[Pen], None]
