#!/usr/bin/env python3
"""Writes the committed seeds of the Java bootstrap fuzz targets (SeededFuzzer) and their index:
src/test/resources/fuzz/bootstrap-server/ and .../bootstrap-client/. Run it again after changing
the bootstrap's layout (org.aldeia.core.BootstrapProtocol); it keeps regressions (files named in
an index under "# regressions") and rewrites the seeds.

An input's first byte is the stage the test plays genuinely up to (see BootstrapServerFuzzTest
and BootstrapClientFuzzTest); the rest is sent as is. The in-memory test transport's endpoint
information is 16 bytes (transport id, endpoint key); its identity, 8 (transport id)."""
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
RESOURCES = os.path.join(HERE, '..', 'resources', 'fuzz')
MAGIC, VERSION = 0x414C4445, 7
TCP_FIRST, CONTROL, MOVED = -1, -1, -2
CHALLENGE = 0
START = struct.pack('>II', MAGIC, VERSION)
rnd = random.Random(9)


def rb(n):
    return bytes(rnd.getrandbits(8) for _ in range(n))


def info(transport=12345, key=1):
    return struct.pack('>qq', transport, key)


def hello(pub=None, inf=None, length=None, route=b'default'):
    """A HELLO without a ticket: public key, nonce, ticket and its proof (zeros), route, endpoint info."""
    body = ((rb(32) if pub is None else pub) + rb(32) + bytes(64) + bytes([len(route)]) + route
            + (info() if inf is None else inf))
    return struct.pack('>i', len(body) if length is None else length) + body


def reply(pub=None, identity=None, length=None, version=VERSION):
    """A CHALLENGE reply: mode, public key, nonce, proof, identity."""
    body = (bytes([CHALLENGE]) + (rb(32) if pub is None else pub) + rb(32) + rb(32)
            + (struct.pack('>q', 12345) if identity is None else identity))
    return struct.pack('>III', MAGIC, version, (len(body) if length is None else length) & 0xffffffff) + body


def server_info(inf=None, length=None):
    """The INFO: length, endpoint info, the next ticket, the MAC."""
    inf = info() if inf is None else inf
    return struct.pack('>I', (len(inf) if length is None else length) & 0xffffffff) + inf + rb(32) + rb(32)


SEEDS = {
    'bootstrap-server': {
        's0-empty.bin': b'\x00',
        's0-http.bin': b'\x00' + b'GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: curl/8\r\n\r\n',
        's0-start-only.bin': b'\x00' + START,
        's0-old-version.bin': b'\x00' + struct.pack('>II', MAGIC, 2) + hello(),
        's0-hello-bad-proof.bin': b'\x00' + START + hello() + rb(32),
        's0-hello-small-order-key.bin': b'\x00' + START + hello(pub=bytes(32)),
        's0-hello-longest.bin': b'\x00' + START + hello(inf=info() + rb(4096 - 16)),
        's0-hello-length-too-big.bin': b'\x00' + START + hello(length=128 + 1 + 200 + 4096 + 1),
        's0-hello-unknown-route.bin': b'\x00' + START + hello(route=b'fabric verbs;IB-0xfe80::'),
        's0-hello-short-info.bin': b'\x00' + START + hello(inf=rb(3)),
        's0-tcp-first.bin': b'\x00' + START + struct.pack('>ii', TCP_FIRST, 4) + b'data',
        's0-tcp-first-moved-unasked.bin': b'\x00' + START + struct.pack('>ii', TCP_FIRST, MOVED),
        's0-tcp-first-control.bin': (b'\x00' + START + struct.pack('>iii', TCP_FIRST, CONTROL, 8 + len(hello()))
                                     + START + hello()),
        's1-hello.bin': b'\x01' + hello() + rb(32),
        's1-garbage.bin': b'\x01' + rb(20),
        's1-tcp-first-frame-too-long.bin': b'\x01' + struct.pack('>ii', TCP_FIRST, 0x7fffffff) + rb(9),
        's2-proof.bin': b'\x02' + rb(32),
        's2-short-proof.bin': b'\x02' + rb(5),
        's3-connected.bin': b'\x03\x01',
        's3-wrong-confirmation.bin': b'\x03\x02',
        's3-nothing.bin': b'\x03',
    },
    'bootstrap-client': {
        'c0-empty.bin': b'\x00',
        'c0-http.bin': b'\x00' + b'HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n',
        'c0-reply-bad-proof.bin': b'\x00' + reply(),
        'c0-reply-small-order-key.bin': b'\x00' + reply(pub=bytes(32)),
        'c0-reply-old-version.bin': b'\x00' + reply(version=2),
        'c0-reply-negative-length.bin': b'\x00' + reply(length=-1),
        'c0-reply-too-long.bin': b'\x00' + reply(length=1 + 4 * 201 + 1),  # past a REPLY's and an UNROUTED's longest
        'c0-reply-too-short.bin': b'\x00' + reply(length=96)[:12 + 96],
        'c0-reply-longest-identity.bin': b'\x00' + reply(identity=rb(64)),
        'c0-reply-short-identity.bin': b'\x00' + reply(identity=rb(3)),
        'c1-info-bad-mac.bin': b'\x01' + server_info(),
        'c1-info-negative-length.bin': b'\x01' + server_info(length=-1),
        'c1-info-too-long.bin': b'\x01' + server_info(length=4097),
        'c1-info-longest.bin': b'\x01' + server_info(inf=info() + rb(4096 - 16)),
        'c1-connected-byte.bin': b'\x01\x01',
        'c1-nothing.bin': b'\x01',
        'c2-connected.bin': b'\x02\x01',
        'c2-wrong-confirmation.bin': b'\x02\x07',
        'c2-nothing.bin': b'\x02',
    },
}


def regressions(directory):
    index = os.path.join(directory, 'index')
    if not os.path.exists(index):
        return []
    lines = open(index).read().split('\n')
    return [l.strip() for l in lines[lines.index('# regressions') + 1:] if l.strip()] if '# regressions' in lines else []


for target, seeds in SEEDS.items():
    directory = os.path.join(RESOURCES, target)
    os.makedirs(directory, exist_ok=True)
    kept = regressions(directory)
    for name in os.listdir(directory):
        if name.endswith('.bin') and name not in kept and name not in seeds:
            os.remove(os.path.join(directory, name))
    for name, data in seeds.items():
        with open(os.path.join(directory, name), 'wb') as f:
            f.write(data)
    with open(os.path.join(directory, 'index'), 'w') as f:
        f.write('# The committed inputs of this fuzz target (SeededFuzzer), written by src/test/fuzz/make_seeds.py.\n'
                '# First byte: the stage (see the test class); the rest is sent as is.\n')
        f.write('\n'.join(sorted(seeds)) + '\n# regressions\n' + ''.join(k + '\n' for k in kept))
