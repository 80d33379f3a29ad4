"""Shapes several pictograms share: sun, cloud, mountains, football, suitcase, aeroplane, flag."""

from __future__ import annotations

import math

from .pen import BLACK, WHITE, Pen


def sun(p: Pen, cx, cy, r, c=(255, 205, 60)):
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


def cloud(p: Pen, x, y, s=1.0, c=WHITE):
    for dx, dy, r in ((0, 0, 22), (26, -12, 28), (56, 0, 22), (28, 8, 22)):
        p.circle(x + dx * s, y + dy * s, r * s, fill=c, outline=None)


def mountains(p: Pen, base, peaks, c=(110, 120, 140), snow=WHITE):
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


def soccer_ball(p: Pen, cx, cy, r):
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


def suitcase(p: Pen, x, y, w, h, c=(200, 80, 50), stickers=True):
    p.rrect((x + w * 0.32, y - h * 0.18, x + w * 0.68, y + 6), 8, fill=None, width=6)
    p.rrect((x, y, x + w, y + h), 14, fill=c, width=4)
    p.line([(x + w * 0.25, y), (x + w * 0.25, y + h)], width=4)
    p.line([(x + w * 0.75, y), (x + w * 0.75, y + h)], width=4)
    if stickers:
        p.circle(x + w * 0.5, y + h * 0.35, min(w, h) * 0.12, fill=(255, 220, 80), outline=None)
        p.rect((x + w * 0.38, y + h * 0.6, x + w * 0.62, y + h * 0.78), fill=(90, 170, 220), outline=None)


def plane(p: Pen, cx, cy, s=1.0, c=WHITE, angle=0.0):
    def tr(pts):
        ca, sa = math.cos(angle), math.sin(angle)
        return [(cx + (x * ca - y * sa) * s, cy + (x * sa + y * ca) * s) for x, y in pts]

    p.poly(tr([(-120, -8), (100, -10), (130, 0), (100, 10), (-120, 8)]), fill=c, width=3)  # fuselage
    p.poly(tr([(-10, 0), (40, 0), (-30, -90), (-50, -90)]), fill=c, width=3)  # wing up
    p.poly(tr([(-10, 0), (40, 0), (-30, 90), (-50, 90)]), fill=c, width=3)  # wing down
    p.poly(tr([(-120, 0), (-95, 0), (-115, -40), (-130, -40)]), fill=c, width=3)
    p.poly(tr([(-120, 0), (-95, 0), (-115, 40), (-130, 40)]), fill=c, width=3)


def flag(p: Pen, x, y, w, h, bands, vertical=False, pole=True):
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
