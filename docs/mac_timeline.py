"""Draw README's MAC picture: python docs/mac_timeline.py [OUT.png]

Elloumi et al.'s 802.14 network (scenarios/elloumi-802.14.toml, FCFS, 30 % background load), traced:
station 0's request/grant cycle over 30 ms, and the ACK inter-arrival times at the TCP sender with the
paper's two ACK spacings (0.34 and 1.19 ms, Sec. 5.2), the 1.24 ms this 53-minislot frame gives, and the
1.55 ms data spacing marked.
"""

import sys
from pathlib import Path

import hfcsim
from hfcsim.macplot import mac_timeline

here = Path(__file__).resolve().parent
out = Path(sys.argv[1]) if len(sys.argv) > 1 else here / "images" / "mac-timeline.png"
result = hfcsim.simulate(here.parent / "scenarios" / "elloumi-802.14.toml", seed=1, trace=True)
print(mac_timeline(result, out, station=0, flow=0, start_s=2.0, span_s=0.03, marks_ms=(0.34, 1.19, 1.24, 1.55)))
