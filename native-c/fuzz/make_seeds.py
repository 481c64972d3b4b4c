#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets (fuzz/corpus/<target>/): valid and near-valid
inputs in each target's input format (described at the top of fuzz/fuzz_<target>.c). The
corpus is committed; run this again (from anywhere) after changing a format or adding seeds:
it rewrites the seeds it makes and leaves other files of the corpus alone.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

AUTH1, AUTH2, AUTH3, DATA, LOOKUP, LOOKUP_REPLY, ARRIVE, RELEASE = range(1, 9)


def frame(ftype, src, index, length, payload=b""):
    """A frame header in network byte order (tcp.h): type, src, index, 4 unused bytes, len."""
    return struct.pack(">IiiIQ", ftype & 0xffffffff, src, index, 0, length) + payload


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- fuzz_tcp_handshake: [AUTH1 header][AUTH1 payload 24][AUTH3 header][AUTH3 payload 32][mode] ----
def handshake():
    t = "fuzz_tcp_handshake"
    nonce = bytes(range(0x10, 0x20))
    hello = struct.pack(">II", 1, 0) + nonce

    def hs(h1, p1, h3, p3, mode):
        return h1 + p1 + h3 + p3 + bytes([mode])

    good1 = frame(AUTH1, 1, 0, 24)
    good3 = frame(AUTH3, 1, 0, 32)
    write(t, "valid_correct_proof", hs(good1, hello, good3, bytes(32), 1))
    write(t, "valid_forged_proof", hs(good1, hello, good3, b"\x5a" * 32, 0))
    write(t, "proof_one_bit_off", hs(good1, hello, good3, b"\x01" + bytes(31), 1))
    write(t, "proof_claims_node0", hs(good1, hello, frame(AUTH3, 0, 0, 32), bytes(32), 1))
    write(t, "proof_for_node1", hs(good1, hello, frame(AUTH3, 1, 1, 32), bytes(32), 1))
    write(t, "proof_long", hs(good1, hello, frame(AUTH3, 1, 0, 33), bytes(32), 1))
    write(t, "proof_as_hello", hs(good1, hello, frame(AUTH1, 1, 0, 24), hello + bytes(8), 1))
    write(t, "hello_version2", hs(good1, struct.pack(">II", 2, 0) + nonce, good3, bytes(32), 1))
    write(t, "hello_wants_tls", hs(good1, struct.pack(">II", 1, 1) + nonce, good3, bytes(32), 1))
    write(t, "hello_for_node1", hs(frame(AUTH1, 1, 1, 24), hello, good3, bytes(32), 1))
    write(t, "hello_claims_self", hs(frame(AUTH1, 0, 0, 24), hello, good3, bytes(32), 1))
    write(t, "hello_claims_node2", hs(frame(AUTH1, 2, 0, 24), hello, good3, bytes(32), 1))
    write(t, "hello_claims_negative", hs(frame(AUTH1, -1, 0, 24), hello, good3, bytes(32), 1))
    write(t, "hello_huge_len", hs(frame(AUTH1, 1, 0, 1 << 63), hello, good3, bytes(32), 1))
    write(t, "hello_as_data", hs(frame(DATA, 1, 0, 24), hello, good3, bytes(32), 1))
    write(t, "hello_only", good1 + hello)
    write(t, "http_request", b"GET / HTTP/1.1\r\nHost: node0\r\n\r\n")
    write(t, "all_ff", b"\xff" * 105)
    write(t, "half_header", good1[:10])


# ---- fuzz_tcp_frames: the stream node 1 sends on a proved connection ----
WATCHED, OPEN, NOBODY = 0x10000, 0x10001, 0x10002


def data(index, payload, src=1):
    return frame(DATA, src, index, len(payload), payload)


def lookup(name):
    return frame(LOOKUP, 1, 0, len(name), name)


def frames():
    t = "fuzz_tcp_frames"
    pat = bytes((i * 7 + 3) & 0xff for i in range(4096))
    write(t, "data_watched", data(WATCHED, pat[:100]) + data(WATCHED, pat[:1]) + data(WATCHED, b""))
    write(t, "data_watched_at_limit", data(WATCHED, pat[:4096]))
    write(t, "data_watched_over_limit", frame(DATA, 1, WATCHED, 4097) + pat[:200])
    write(t, "data_open", data(OPEN, pat[:3000]) + data(OPEN, pat[:63]) + data(WATCHED, pat[:8]))
    write(t, "data_nobody", data(OPEN, pat[:10]) + data(NOBODY, pat[:10]))
    write(t, "data_gone_mailbox", data(0x20000, pat[:50]) + data(0x10005, pat[:9]) + data(WATCHED, pat[:5]))
    write(t, "data_gone_huge", frame(DATA, 1, 0x7fff0000, 1 << 40))
    write(t, "data_gone_over_max", frame(DATA, 1, 0x20000, (1 << 20) + 1) + pat[:64])
    write(t, "data_negative_index", data(-5, pat[:8]))
    write(t, "data_cut_short", frame(DATA, 1, WATCHED, 100) + pat[:10])
    write(t, "header_cut_short", data(WATCHED, pat[:4]) + frame(DATA, 1, WATCHED, 4)[:13])
    write(t, "lookups", lookup(b"watched") + lookup(b"open") + lookup(b"nobody") + lookup(b"missing")
          + data(OPEN, pat[:20]))
    write(t, "lookup_longest_name", lookup(b"n" * 63) + data(OPEN, pat[:2]))
    write(t, "lookup_name_too_long", lookup(b"n" * 64))
    write(t, "lookup_empty_name", frame(LOOKUP, 1, 0, 0))
    write(t, "lookup_nul", lookup(b"vi\x00tim"))
    write(t, "lookup_reply_unasked", frame(LOOKUP_REPLY, 1, 3, 0))
    write(t, "lookup_reply_payload", frame(LOOKUP_REPLY, 1, 3, 4) + b"abcd")
    write(t, "barrier_arrive", frame(ARRIVE, 1, 0, 0) + frame(ARRIVE, 1, 0, 0) + data(WATCHED, pat[:3]))
    write(t, "barrier_payload", frame(ARRIVE, 1, 0, 8) + pat[:8])
    write(t, "barrier_release_from_node1", frame(RELEASE, 1, 0, 0))
    write(t, "claims_node2", data(WATCHED, pat[:4], src=2))
    write(t, "claims_node0", data(OPEN, pat[:4], src=0))
    write(t, "type_99", frame(99, 1, 0, 0))
    write(t, "second_handshake", frame(AUTH1, 1, 0, 24) + bytes(24))
    write(t, "mixed", lookup(b"watched") + data(WATCHED, pat[:100]) + frame(ARRIVE, 1, 0, 0) + data(OPEN, pat[:700])
          + lookup(b"open") + data(0x30001, pat[:30]) + data(WATCHED, pat[:4096]) + frame(99, 1, 0, 0)
          + data(OPEN, pat[:5]))


# ---- fuzz_sci_mailbox: node 1's area: owner line, request line, signal, medbuf 1024, ring 64 x 64 ----
MEDBUF = 1024
OWNER = 0x5eed0000cafe0001


WATCH_NODE1, WATCH_NONE, WATCH_NOBODY = 0, 1, 2


def area(owner=OWNER, req=(0, 0, 0), signal=0, medbuf=b"", ring=b"", watch=WATCH_NODE1):
    line_owner = struct.pack("<QQB", owner, 0, watch).ljust(64, b"\0")
    line_req = struct.pack("<IIQ", *req).ljust(64, b"\0")
    assert len(medbuf) <= MEDBUF and len(ring) <= 64 * 64
    out = line_owner + line_req + bytes([signal])
    if ring:
        out += medbuf.ljust(MEDBUF, b"\0") + ring
    else:
        out += medbuf
    return out


def p1_packet(payload, seq, lap=0):
    assert len(payload) <= 62
    return payload.ljust(62, b"\0") + bytes([seq & 0xff, 0x80 | (lap & 1) << 6 | len(payload)])


def p2_stamp(seq, owner=OWNER):
    """seq << 32 | the sender's tag (sci.h sci_p2_stamp)."""
    return (seq & 0xffffffff) << 32 | ((owner ^ owner >> 32) & 0xffffffff | 1)


P2_WRAP = 0xffffffff


def p2_header(datalen, seq, owner=OWNER, body=b""):
    """A header line: stamp, datalen, zero, then the body's first 48 bytes (sci.h)."""
    return struct.pack("<QII", p2_stamp(seq, owner), datalen, 0) + body[:48].ljust(48, b"\0")


def p2_message(payload, seq, owner=OWNER):
    """Header line holding the first 48 bytes, then the rest in whole lines."""
    rest = payload[48:]
    real = (len(rest) + 63) // 64 * 64
    return p2_header(len(payload), seq, owner, payload) + rest.ljust(real, b"\0")


def sci():
    t = "fuzz_sci_mailbox"
    pat = bytes((i * 13 + 1) & 0xff for i in range(2048))
    write(t, "p1_one", area(ring=p1_packet(b"hello", 0)))
    write(t, "p1_one_unwatched", area(ring=p1_packet(b"hello", 0), watch=WATCH_NONE))
    write(t, "p1_one_nobody", area(ring=p1_packet(b"hello", 0), watch=WATCH_NOBODY))
    write(t, "p2_one_unwatched", area(medbuf=p2_message(pat[:100], 0), watch=WATCH_NONE))
    write(t, "p1_four", area(ring=b"".join(p1_packet(pat[:n], k) for k, n in enumerate((0, 62, 1, 30)))))
    write(t, "p1_too_long", area(ring=pat[:62] + bytes([0, 0x80 | 63])))
    write(t, "p1_wrong_lap", area(ring=p1_packet(b"lap", 0, lap=1)))
    write(t, "p1_out_of_order", area(ring=p1_packet(b"second", 1) + p1_packet(b"first", 0)))
    write(t, "p1_no_owner", area(owner=0, ring=p1_packet(b"hello", 0)))
    write(t, "p1_truncated", area(ring=p1_packet(b"x" * 62, 0) + p1_packet(pat[:62], 1) + p1_packet(b"y", 2)))
    full_ring = b"".join(p1_packet(pat[k:k + 40], k) for k in range(64))
    write(t, "p1_full_ring", area(ring=full_ring))
    write(t, "p2_one", area(medbuf=p2_message(pat[:100], 0)))
    write(t, "p2_three", area(medbuf=p2_message(pat[:100], 0) + p2_message(pat[:256], 1) + p2_message(pat[:63], 2)))
    write(t, "p2_truncated", area(medbuf=p2_message(pat[:64], 0) + p2_message(pat[:200], 1)))
    write(t, "p2_fills_buffer", area(medbuf=p2_message(pat[:1008], 0)))
    write(t, "p2_wrap", area(medbuf=p2_message(pat[:80], 0) + p2_header(P2_WRAP, 1)))
    write(t, "p2_wrap_at_start", area(medbuf=p2_header(P2_WRAP, 0)))
    write(t, "p2_too_long", area(medbuf=p2_header(2000, 0)))
    write(t, "p2_past_buffer", area(medbuf=p2_message(pat[:900], 0) + p2_header(100, 1)))
    write(t, "p2_wrong_seq", area(medbuf=p2_message(pat[:100], 5)))
    write(t, "p2_other_sender", area(medbuf=p2_message(pat[:100], 0, owner=OWNER + 2)))
    write(t, "p1_p2_interleaved", area(medbuf=p2_message(pat[:70], 0) + p2_message(pat[:90], 2),
                                       ring=p1_packet(b"one", 1) + p1_packet(b"three", 3)))
    write(t, "p3_request", area(req=(0, 0, 1000), signal=1))
    write(t, "p3_request_small", area(req=(0, 0, 90), signal=1))
    write(t, "p3_request_too_big", area(req=(0, 0, 1 << 40), signal=1))
    write(t, "p3_request_empty", area(req=(0, 0, 0), signal=1))
    write(t, "p3_done_signal", area(req=(0, 0, 500), signal=0xff))
    write(t, "p3_after_p1", area(req=(1, 0, 700), signal=1, ring=p1_packet(b"first", 0)))


if __name__ == "__main__":
    handshake()
    frames()
    sci()
