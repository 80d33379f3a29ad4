"""Entertainment: the ten pictograms of the topic, in manifest order (``PICTOGRAMS``)."""

from __future__ import annotations

import math

from .pen import BLACK, WHITE, Pen, Pictogram


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


PICTOGRAMS = (
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
)
