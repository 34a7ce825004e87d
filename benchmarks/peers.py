"""The smartnoise-synth peers (AIM, MST, MWEM): now ``sklearn_privsyn.benchmark.peers``.

Kept so that the scripts here, and their commands in the notes, keep working.
"""

from sklearn_privsyn.benchmark.peers import (  # noqa: F401
    PEERS,
    PeerNotInstalled,
    SmartNoisePeer,
    snsynth_available,
)
