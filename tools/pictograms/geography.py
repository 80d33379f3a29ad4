"""Geography: the ten pictograms of the topic, in manifest order (``PICTOGRAMS``)."""

from __future__ import annotations

import math

from . import motifs
from .pen import WHITE, Pen, Pictogram


def geo_mountains_river(p: Pen):
    p.vgrad((120, 180, 240), (200, 230, 255), 0, 300)
    motifs.sun(p, 520, 80, 36)
    motifs.mountains(p, 300, ((140, 200, 210), (330, 220, 250), (520, 180, 190)))
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
    motifs.sun(p, 130, 110, 45, c=(255, 160, 40))
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
    motifs.cloud(p, 90, 70)
    motifs.cloud(p, 420, 100, 1.3)
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
        motifs.cloud(p, x - 30, y, 0.7)
    for x, y in ((60, 80), (580, 120), (90, 300), (560, 330)):
        p.circle(x, y, 30, fill=(60, 130, 60), outline=None)


def geo_coast_cliffs(p: Pen):
    p.vgrad((120, 190, 250), (190, 225, 255), 0, 230)
    motifs.cloud(p, 380, 60)
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


def geo_canyon(p: Pen):
    p.vgrad((250, 180, 120), (250, 225, 180), 0, 200)
    motifs.sun(p, 320, 120, 40, c=(255, 240, 160))
    p.poly([(0, 120), (140, 110), (180, 160), (230, 170), (250, 480), (0, 480)], fill=(190, 90, 50), outline=None)
    p.poly([(640, 100), (480, 120), (450, 170), (400, 180), (380, 480), (640, 480)], fill=(170, 80, 45), outline=None)
    for y in (200, 260, 320, 380):
        p.line([(0, y), (235, y + 10)], fill=(150, 65, 35), width=5)
        p.line([(640, y - 10), (395, y)], fill=(140, 60, 30), width=5)
    p.poly([(230, 170), (400, 180), (380, 480), (250, 480)], fill=(220, 140, 90), outline=None)
    p.poly([(300, 300), (330, 300), (350, 380), (300, 480), (260, 480), (310, 380)], fill=(60, 140, 200), outline=None)


PICTOGRAMS = (
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
)
