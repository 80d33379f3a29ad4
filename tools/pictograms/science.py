"""Science and technology: the ten pictograms of the topic, in manifest order (``PICTOGRAMS``)."""

from __future__ import annotations

import math

from .pen import WHITE, Pen, Pictogram


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


PICTOGRAMS = (
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
)
