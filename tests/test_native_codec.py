"""The native messaging frame codec: exact bytes, chunking under Chromium's 1 MiB limit, and fuzz."""

from __future__ import annotations

import json
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from tabpilot.native.codec import (
    MAX_FRAME_TO_BROWSER,
    MAX_INCOMING_FRAME,
    ChunkReassembler,
    FrameDecoder,
    FrameError,
    NotFrames,
    decode_payload,
    encode_frame,
    encode_frames,
)

HEADER = struct.Struct("=I")


def raw_frame(payload: bytes) -> bytes:
    return HEADER.pack(len(payload)) + payload


def frame_lengths(frames: list[bytes]) -> list[int]:
    return [HEADER.unpack(f[:4])[0] for f in frames]


def test_a_frame_is_native_endian_length_then_utf8_json():
    frame = encode_frame({"type": "ping", "text": "é"})
    payload = '{"type":"ping","text":"é"}'.encode()
    assert frame == struct.pack("=I", len(payload)) + payload


def test_decoder_joins_frames_split_anywhere():
    messages = [{"type": "a", "n": i, "s": "x" * i} for i in range(20)]
    stream = b"".join(encode_frame(m) for m in messages)
    for step in (1, 3, 7, 64):
        decoder = FrameDecoder()
        out = []
        for i in range(0, len(stream), step):
            out += decoder.feed(stream[i : i + step])
        assert out == messages
        assert decoder.pending_bytes == 0


def test_each_bad_frame_is_reported_and_decoding_goes_on():
    decoder = FrameDecoder()
    stream = (
        raw_frame(b"{not json")
        + raw_frame(b"\xff\xfe")
        + raw_frame(b"[1, 2]")
        + raw_frame(b"")
        + encode_frame({"type": "ping", "id": "ok"})
    )
    out = decoder.feed(stream)
    assert [type(x) for x in out] == [FrameError, FrameError, FrameError, FrameError, dict]
    assert "not valid JSON" in out[0].message
    assert "UTF-8" in out[1].message
    assert "JSON object" in out[2].message
    assert out[4] == {"type": "ping", "id": "ok"}


def test_absurd_length_ends_the_stream_without_waiting_for_or_keeping_its_bytes():
    decoder = FrameDecoder()
    huge = 3 * 1024 * 1024 * 1024  # 3 GiB announced
    out = decoder.feed(encode_frame({"type": "before"}) + HEADER.pack(huge) + b"x" * 1000)
    assert out[0] == {"type": "before"}
    assert len(out) == 2 and isinstance(out[1], NotFrames) and out[1] is decoder.broken
    assert out[1].message == (f"a frame header announced {huge} bytes, over the {MAX_INCOMING_FRAME} byte limit: "
                              "the stream is not native-messaging frames")
    assert decoder.pending_bytes == 0  # nothing buffered for it


def test_after_a_header_over_the_limit_nothing_more_is_read_as_frames():
    # A header over the limit was skipped, its announced length read and thrown away (up to 4 GiB of a stream
    # that is not frames), and decoding went on at whatever byte came next.
    decoder = FrameDecoder(max_frame=100)
    body = b"y" * 150
    out = decoder.feed(HEADER.pack(len(body)) + body[:50])
    out += decoder.feed(body[50:] + encode_frame({"type": "after"}))
    assert [type(item) for item in out] == [NotFrames]
    assert decoder.feed(encode_frame({"type": "later"})) == [] and decoder.pending_bytes == 0


def test_small_messages_are_one_frame():
    frames = encode_frames({"type": "reply", "data": "x" * 1000})
    assert len(frames) == 1


def test_large_message_is_chunked_under_the_limit_and_reassembles():
    message = {"type": "reply", "id": "7", "ok": True, "data": {"text": "ab\"\\\n€𝄞" * 400_000}}
    frames = encode_frames(message)
    assert len(frames) > 1
    assert max(frame_lengths(frames)) <= MAX_FRAME_TO_BROWSER
    decoder, joiner = FrameDecoder(), ChunkReassembler()
    results = [joiner.accept(m) for m in decoder.feed(b"".join(frames))]
    assert results[:-1] == [None] * (len(frames) - 1)
    assert results[-1] == message


def test_escaping_heavy_text_still_fits():
    # Quotes and backslashes double in size inside the chunk's JSON string.
    message = {"type": "x", "data": '"\\' * 700_000}
    frames = encode_frames(message)
    assert max(frame_lengths(frames)) <= MAX_FRAME_TO_BROWSER
    joiner = ChunkReassembler()
    out = [joiner.accept(m) for m in FrameDecoder().feed(b"".join(frames))]
    assert out[-1] == message


def test_lone_surrogates_from_a_page_are_escaped_not_fatal():
    message = {"type": "x", "data": "bad \ud800 text"}
    (frame,) = encode_frames(message)
    assert FrameDecoder().feed(frame) == [{"type": "x", "data": "bad \ufffd text"}]


def test_a_lone_surrogate_arriving_in_a_frame_becomes_u_fffd_and_pairs_stay():
    # what Chromium's JSON.stringify sends for a page's half emoji: the escape, in any case
    payload = b'{"type":"hello","extensionVersion":"1.0\\uD800","t\\udfffk":["a\\ud83d\\ude00b","\\udc00"]}'
    [message] = FrameDecoder().feed(raw_frame(payload))
    assert message == {"type": "hello", "extensionVersion": "1.0\ufffd", "t\ufffdk": ["a😀b", "\ufffd"]}
    json.dumps(message, ensure_ascii=False).encode("utf-8")  # fit for a log line, a request, the database


def test_a_pair_split_across_chunks_is_joined_and_a_lone_half_is_replaced():
    pieces = ['{"type":"x","data":"a\\ud83d', '\\ude00 b \\ud800"}']
    joiner = ChunkReassembler()
    frames = b"".join(encode_frame({"type": "chunk", "chunkId": "s", "index": i, "count": 2, "data": piece})
                      for i, piece in enumerate(pieces))
    out = [joiner.accept(m) for m in FrameDecoder().feed(frames)]
    assert out == [None, {"type": "x", "data": "a😀 b \ufffd"}]


def test_reassembler_rejects_out_of_order_and_bad_chunks():
    joiner = ChunkReassembler()
    assert isinstance(joiner.accept({"type": "chunk", "chunkId": "a", "index": 1, "count": 2, "data": "x"}), FrameError)
    assert isinstance(joiner.accept({"type": "chunk", "chunkId": "b", "index": 0, "count": 0, "data": "x"}), FrameError)
    assert isinstance(joiner.accept({"type": "chunk", "chunkId": 3, "index": 0, "count": 1, "data": "x"}), FrameError)
    assert joiner.accept({"type": "chunk", "chunkId": "c", "index": 0, "count": 2, "data": '{"type":'}) is None
    assert joiner.accept({"type": "chunk", "chunkId": "c", "index": 1, "count": 2, "data": '"ok"}'}) == {"type": "ok"}
    broken = [
        joiner.accept({"type": "chunk", "chunkId": "d", "index": 0, "count": 2, "data": "{oops"}),
        joiner.accept({"type": "chunk", "chunkId": "d", "index": 1, "count": 2, "data": "}"}),
    ]
    assert broken[0] is None and isinstance(broken[1], FrameError)


def chunk(chunk_id: object, index: object, count: object, data: object) -> dict:
    return {"type": "chunk", "chunkId": chunk_id, "index": index, "count": count, "data": data}


def test_an_error_shows_the_chunk_id_cut_short_and_escaped_whatever_its_length_and_characters():
    # Found reviewing the codec: each refusal repeated the sender's chunkId whole, megabytes of it, lone surrogates
    # (a line nothing can write as UTF-8) and terminal escapes included.
    chunk_id = "\x1b[2J\n\ud800" + "x" * 5_000_000
    joiner = ChunkReassembler()
    assert joiner.accept(chunk(chunk_id, 0, 3, '{"type":')) is None
    refusals = [
        joiner.accept(chunk(chunk_id, 2, 3, "x")),  # out of order
        joiner.accept(chunk(chunk_id, 5, 3, "x")),  # an index past the count
        joiner.accept(chunk(chunk_id, "0", 3, "x")),  # not a number
        ChunkReassembler(max_total=100).accept(chunk(chunk_id, 0, 2, "x")),  # over the limit with its id
    ]
    for refusal in refusals:
        assert isinstance(refusal, FrameError), refusal
        assert len(refusal.message) < 300 and refusal.message.startswith("chunk '\\x1b[2J\\n\\ud800xxx"), refusal
        assert "…" in refusal.message and refusal.message.isprintable(), refusal
        refusal.message.encode("utf-8")  # fit for a log line
    assert joiner.pending == 0 and joiner.held == 0  # a refused message is dropped


def test_unfinished_messages_hold_no_more_than_the_limit_together_and_the_newest_still_arrives():
    # Eight unfinished messages were each allowed the whole limit: eight times 64 Mi characters held at once.
    joiner = ChunkReassembler(max_total=10_000, max_pending=8)
    for n in range(8):  # 8 × 2000 characters: over the limit together, so the oldest go first
        assert joiner.accept(chunk(f"big-{n}", 0, 2, '{"type":"x","data":"' + "z" * 1980)) is None
    forgotten = joiner.accept(chunk("big-0", 1, 2, '"}'))
    assert isinstance(forgotten, FrameError) and "got piece 1 of 2, expected 0" in forgotten.message, forgotten
    assert joiner.accept(chunk("big-7", 1, 2, '"}')) == {"type": "x", "data": "z" * 1980}
    for n in range(20_000):  # a flood of ids, each a first piece that never gets its second
        assert joiner.accept(chunk(f"flood-{n}-" + "y" * (n % 3000), 0, 2, "z" * (n % 2000))) is None
        assert joiner.pending <= 8 and joiner.held <= 10_000
    assert joiner.accept(chunk("last", 0, 2, '{"type":"ok","data":"' + "z" * 9000)) is None
    assert joiner.accept(chunk("last", 1, 2, '"}')) == {"type": "ok", "data": "z" * 9000}
    assert joiner.pending <= 1


_chunk_ids = st.text(max_size=6) | st.text(alphabet=st.characters(categories=["Cs", "Cc", "Zl", "Ll", "So"]),
                                           min_size=60, max_size=400)
_chunks = st.builds(chunk, _chunk_ids | st.integers() | st.none(), st.integers(min_value=-1, max_value=4)
                    | st.text(max_size=2), st.integers(min_value=0, max_value=4), st.text(max_size=40))


@settings(max_examples=150, deadline=None)
@given(st.lists(_chunks, max_size=30), st.integers(min_value=1, max_value=4), st.integers(min_value=0, max_value=200))
def test_fuzz_any_chunks_stay_within_the_limits_and_every_refusal_is_short_and_printable(
    chunks: list[dict], max_pending: int, max_total: int
):
    joiner = ChunkReassembler(max_total=max_total, max_pending=max_pending)
    for frame in chunks:
        out = joiner.accept(frame)
        assert out is None or isinstance(out, dict | FrameError)
        if isinstance(out, FrameError):
            assert len(out.message) <= 400 and out.message.isprintable(), out.message
            out.message.encode("utf-8")
        assert joiner.pending <= max_pending and 0 <= joiner.held <= max_total


# --- fuzz ------------------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000), st.lists(st.integers(min_value=1, max_value=64), min_size=1, max_size=10))
def test_fuzz_random_bytes_never_raise(data: bytes, cuts: list[int]):
    decoder = FrameDecoder(max_frame=4096)
    position = 0
    for cut in cuts * 50:
        if position >= len(data):
            break
        for item in decoder.feed(data[position : position + cut]):
            assert isinstance(item, dict | FrameError)
        position += cut
    decoder.feed(data[position:])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=300), st.binary(max_size=300)), max_size=20))
def test_fuzz_random_lengths_with_random_bodies(frames: list[tuple[int, bytes]]):
    decoder = FrameDecoder(max_frame=200)
    stream = b"".join(HEADER.pack(n) + body for n, body in frames)
    for item in decoder.feed(stream):
        assert isinstance(item, dict | FrameError)


def _walked(stream: bytes, limit: int) -> list[dict | FrameError]:
    """What the stream holds, read the plain way: frame by frame until a header over `limit` ends it."""
    out: list[dict | FrameError] = []
    position = 0
    while len(stream) - position >= 4:
        (length,) = HEADER.unpack_from(stream, position)
        if length > limit:
            return [*out, NotFrames(f"a frame header announced {length} bytes, over the {limit} byte limit: "
                                    "the stream is not native-messaging frames")]
        if len(stream) - position - 4 < length:
            break
        out.append(decode_payload(stream[position + 4 : position + 4 + length]))
        position += 4 + length
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=300), st.binary(max_size=300)), max_size=20),
       st.lists(st.integers(min_value=1, max_value=64), min_size=1, max_size=10))
def test_fuzz_frames_up_to_the_first_header_over_the_limit_then_one_not_frames_and_nothing_after(
    frames: list[tuple[int, bytes]], cuts: list[int]
):
    limit = 200
    stream = b"".join(HEADER.pack(n) + body for n, body in frames) + encode_frame({"type": "tail"})
    decoder, out, position = FrameDecoder(max_frame=limit), [], 0
    for cut in cuts * (len(stream) // sum(cuts) + 1):  # fed in slices of any size: the same result
        out += decoder.feed(stream[position : position + cut])
        position += cut
    assert out == _walked(stream, limit)
    ended = [item for item in out if isinstance(item, NotFrames)]
    assert ended == ([decoder.broken] if decoder.broken else []) and (not ended or out[-1] is decoder.broken)
    if decoder.broken is not None:
        assert decoder.pending_bytes == 0 and decoder.feed(encode_frame({"type": "more"})) == []


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=10), json_values, max_size=6))
def test_fuzz_any_json_object_round_trips(message: dict):
    frames = encode_frames(message, threshold=64)  # tiny threshold: exercise chunking too
    joiner = ChunkReassembler()
    out = [joiner.accept(m) for m in FrameDecoder().feed(b"".join(frames))]
    assert out[-1] == json.loads(json.dumps(message))
    assert all(x is None for x in out[:-1])


def test_numbers_a_frame_could_not_be_written_back_with_are_refused():
    out = FrameDecoder().feed(raw_frame(b'{"type":"x","n":1e400}') + raw_frame(b'{"type":"x","n":NaN}')
                              + raw_frame(b'{"type":"x","n":' + b"9" * 5000 + b"}")
                              + raw_frame(b'{"type":"x","n":1000000000000000000000000000000,"f":-1.5e300}'))
    assert [type(item) for item in out] == [FrameError, FrameError, FrameError, dict]
    assert "out of range" in out[0].message and "NaN" in out[1].message
    assert out[3] == {"type": "x", "n": 10**30, "f": -1.5e300}


_letters = st.characters(categories=["Cs", "Ll", "Lu", "Nd", "So"])  # Cs: lone surrogates
_json_leaves = (st.text(alphabet=_letters, max_size=20)
                | st.integers(min_value=-(10**40), max_value=10**40)
                | st.floats(allow_nan=True, allow_infinity=True) | st.booleans() | st.none())
_json_values = st.recursive(_json_leaves, lambda inner: st.lists(inner, max_size=4)
                            | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _json_values, max_size=5), st.booleans())
def test_fuzz_surrogates_and_huge_numbers_decode_to_messages_that_can_be_written_back(body, ascii_only):
    # what a page (or a broken extension) can put in a frame: lone surrogates, 10^40, 1e308, Infinity
    payload = json.dumps({"type": "x", **body}, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    for item in FrameDecoder().feed(raw_frame(payload)):
        assert isinstance(item, dict | FrameError)
        if isinstance(item, dict):
            [frame] = encode_frames(item, threshold=10**9)  # never raises: no surrogate, no inf left
            text = json.dumps(item, ensure_ascii=False, allow_nan=False)
            text.encode("utf-8")
            assert FrameDecoder().feed(frame) == [item]
