"""Travel: the ten pictograms of the topic, in manifest order (``PICTOGRAMS``)."""

from __future__ import annotations

import math

from . import motifs
from .pen import BLACK, WHITE, Pen, Pictogram


def tra_plane_suitcase(p: Pen):
    p.vgrad((70, 150, 230), (180, 220, 250))
    motifs.cloud(p, 60, 340, 1.4)
    motifs.cloud(p, 430, 60, 1.1)
    motifs.plane(p, 330, 170, 1.1, angle=-0.35)
    motifs.suitcase(p, 80, 330, 180, 120, c=(230, 120, 40))


def tra_suitcase_stickers(p: Pen):
    p.fill((250, 240, 220))
    p.checker((250, 240, 220), (240, 225, 200), n=6)
    motifs.suitcase(p, 160, 150, 320, 260, c=(40, 120, 160), stickers=False)
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
    motifs.plane(p, 360, 285, 0.25, c=(30, 110, 200))
    p.rect((410, 260, 520, 270), fill=BLACK, outline=None)
    p.rect((410, 290, 490, 300), fill=BLACK, outline=None)
    for i in range(10):
        p.rect((535 + i * 5, 250, 537 + i * 5, 315), fill=BLACK, outline=None)


def tra_train(p: Pen):
    p.vgrad((250, 210, 170), (200, 230, 250), 0, 340)
    motifs.mountains(p, 340, ((120, 180, 150), (480, 220, 190)), c=(150, 150, 170))
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
    motifs.sun(p, 540, 70, 35)
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
    motifs.cloud(p, 460, 330, 1.5)
    motifs.cloud(p, 60, 120, 1.0)
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
    motifs.mountains(
        p, 330, ((100, 170, 160), (300, 200, 200), (560, 160, 170)), c=(100, 140, 120), snow=(230, 240, 250)
    )
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
    motifs.suitcase(p, 230, 195, 60, 35, c=(220, 120, 40), stickers=False)
    motifs.suitcase(p, 320, 190, 70, 40, c=(160, 60, 160), stickers=False)


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
    motifs.plane(p, 150, 90, 0.35, angle=-0.6)


PICTOGRAMS = (
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
)
