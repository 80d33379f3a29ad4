"""Sports: the ten pictograms of the topic, in manifest order (``PICTOGRAMS``)."""

from __future__ import annotations

import math

from . import motifs
from .pen import BLACK, WHITE, Pen, Pictogram


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
    motifs.soccer_ball(p, 420, 390, 55)


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
    motifs.soccer_ball(p, 350, 250, 12)


PICTOGRAMS = (
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
)
