"""Health: the ten pictograms of the topic, in manifest order (``PICTOGRAMS``)."""

from __future__ import annotations

import math

from . import motifs
from .pen import WHITE, Pen, Pictogram


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
    motifs.sun(p, 140, 130, 45, c=(255, 150, 50))
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


PICTOGRAMS = (
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
)
