"""Prints "tests failures errors skipped" summed over Surefire's TEST-*.xml reports in a folder
(mvn -q prints nothing on success). Used by the YARN adapters' run-tests.sh."""
import glob
import os
import sys
import xml.etree.ElementTree as ET

t = f = e = s = 0
for p in glob.glob(os.path.join(sys.argv[1], "TEST-*.xml")):
    r = ET.parse(p).getroot()
    t += int(r.get("tests", 0))
    f += int(r.get("failures", 0))
    e += int(r.get("errors", 0))
    s += int(r.get("skipped", 0))
print(t, f, e, s)
