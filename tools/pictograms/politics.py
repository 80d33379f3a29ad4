"""Politics: the ten pictograms of the topic, in manifest order (``PICTOGRAMS``)."""

from __future__ import annotations

import math

from . import motifs
from .pen import BLACK, WHITE, Pen, Pictogram


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
    motifs.flag(p, 80, 150, 80, 55, [(220, 40, 40), WHITE, (40, 90, 200)])
    motifs.flag(p, 560, 150, -80, 55, [(40, 150, 70), WHITE, (220, 40, 40)])


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
        motifs.flag(p, 50 + i * 120, 100 + (i % 2) * 40, 90, 60, list(bands), vertical=(i % 2 == 1))


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
    motifs.flag(p, 40, 30, 40, 28, [(220, 40, 40), WHITE], pole=False)
    motifs.flag(p, 560, 30, 40, 28, [(40, 90, 200), (250, 210, 0)], pole=False, vertical=True)


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


PICTOGRAMS = (
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
)
