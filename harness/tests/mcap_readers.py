#!/usr/bin/env python3
"""Reads the episode recordings of a run with two independent readers and prints what they saw.

    mcap_readers.py full FILE...     a finished file: its CRCs, the summary, then every message
    mcap_readers.py recover FILE     a file cut off by a kill: every message up to the cut

`full` first reads each file as a stream with the `mcap` package's CRC validation on
(`StreamReader(validate_crcs=True)`: every chunk's CRC and the data section's CRC in the DataEnd
record, each checked unless it is 0, which the format defines as "not computed"), then reads its
summary (profile, Statistics) with the `mcap` package, decodes every
message with `mcap-ros2-support` (its ros2msg parser and CDR decoder), then again with
`rosbags` (its rosbag2 MCAP reader and a type store built from the file's own ros2msg texts),
and checks that both readers' counts per topic equal the Statistics. It also checks the ros2
profile: schema encoding ros2msg, message encoding cdr, offered_qos_profiles on every channel,
log time equal to publish time.

`recover` reads the file as a stream (no summary: a killed writer wrote none) with the `mcap`
package until the cut, decoding each message with `mcap-ros2-support` and with `rosbags`' type
store (its rosbag2 reader needs the summary a killed file does not have); it reports the last
log time and the bytes of the messages recovered.

Prints one JSON object per file on stdout; exits 1 with the reason on stderr on any mismatch.
"""

import collections
import json
import sys

from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap.records import Channel, Chunk, DataEnd, Message, Schema
from mcap.stream_reader import StreamReader
from mcap_ros2.decoder import DecoderFactory
from rosbags.rosbag2 import Reader as RosbagsReader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore


def fail(msg):
    print(msg, file=sys.stderr)
    sys.exit(1)


def typestore_for(schemas):
    """A rosbags type store holding the types of the given ros2msg schemas (name -> text)."""
    store = get_typestore(Stores.EMPTY)
    types = {}
    for name, text in schemas.items():
        types.update(get_types_from_msg(text, name))
    store.register(types)
    return store


def check_profile(path, header_profile, schemas, channels):
    if header_profile != "ros2":
        fail(f"{path}: profile {header_profile!r}, expected 'ros2'")
    for ch in channels.values():
        schema = schemas[ch.schema_id]
        if schema.encoding != "ros2msg":
            fail(f"{path}: {ch.topic}: schema encoding {schema.encoding!r}")
        if ch.message_encoding != "cdr":
            fail(f"{path}: {ch.topic}: message encoding {ch.message_encoding!r}")
        if "offered_qos_profiles" not in ch.metadata:
            fail(f"{path}: {ch.topic}: no offered_qos_profiles")


def crcs(path):
    """Reads the whole file as a stream with CRC validation; returns the DataEnd record's CRC."""
    data_section_crc = None
    with open(path, "rb") as f:
        try:
            for record in StreamReader(f, skip_magic=False, emit_chunks=False, validate_crcs=True).records:
                if isinstance(record, DataEnd):
                    data_section_crc = record.data_section_crc
        except Exception as e:  # CRCValidationError is no McapError
            fail(f"{path}: the mcap stream reader with validate_crcs=True refuses the file: {type(e).__name__}: {e}")
    if data_section_crc is None:
        fail(f"{path}: no DataEnd record")
    return data_section_crc


def full(path):
    data_section_crc = crcs(path)
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        header = reader.get_header()
        summary = reader.get_summary()
        if summary is None or summary.statistics is None:
            fail(f"{path}: no summary with Statistics")
        stats = summary.statistics
        check_profile(path, header.profile, summary.schemas, summary.channels)
        expected = {summary.channels[c].topic: n for c, n in stats.channel_message_counts.items()}
        if sum(expected.values()) != stats.message_count:
            fail(f"{path}: Statistics: channel counts add up to {sum(expected.values())}, not {stats.message_count}")
        mcap_counts = collections.Counter()
        last_ns = 0
        for _schema, channel, message, decoded in reader.iter_decoded_messages(log_time_order=False):
            if decoded is None:
                fail(f"{path}: {channel.topic}: not decoded")
            if message.log_time != message.publish_time:
                fail(f"{path}: {channel.topic}: log time {message.log_time} != publish time {message.publish_time}")
            if channel.topic in ("/clock", "/acres/clock"):
                clock_ns = decoded.clock.sec * 1_000_000_000 + decoded.clock.nanosec
                if clock_ns != message.log_time:
                    fail(f"{path}: {channel.topic}: clock {clock_ns} ns logged at {message.log_time} ns")
            mcap_counts[channel.topic] += 1
            last_ns = max(last_ns, message.log_time)
    rosbags_counts = collections.Counter()
    with RosbagsReader(path) as bag:
        # rosbags parses offered_qos_profiles as rosbag2 does: one keep-last profile a channel.
        for c in bag.connections:
            qos = c.ext.offered_qos_profiles
            if len(qos) != 1 or qos[0].history.name != "KEEP_LAST" or qos[0].depth < 1:
                fail(f"{path}: {c.topic}: offered_qos_profiles read by rosbags as {qos}")
        store = typestore_for({c.msgtype: c.msgdef.data for c in bag.connections})
        for conn, _t, raw in bag.messages():
            store.deserialize_cdr(raw, conn.msgtype)
            rosbags_counts[conn.topic] += 1
        if bag.message_count != stats.message_count:
            fail(f"{path}: rosbags counts {bag.message_count} messages, the Statistics {stats.message_count}")
    for name, counts in (("mcap-ros2-support", mcap_counts), ("rosbags", rosbags_counts)):
        if dict(counts) != {k: v for k, v in expected.items() if v}:
            fail(f"{path}: {name} decoded {dict(counts)}, the Statistics say {expected}")
    return {
        "file": str(path),
        "messages": stats.message_count,
        "topics": expected,
        "types": {c.topic: summary.schemas[c.schema_id].name for c in summary.channels.values()},
        "chunks": stats.chunk_count,
        "last_log_time_ns": last_ns,
        "rosbags_messages": sum(rosbags_counts.values()),
        "data_section_crc": data_section_crc,
    }


def recover(path):
    schemas, channels = {}, {}
    counts = collections.Counter()
    last_ns = 0
    data_bytes = 0
    decoders = {}
    header_profile = None
    stopped = None
    raw_messages = []
    with open(path, "rb") as f:
        try:
            for record in StreamReader(f, skip_magic=False, emit_chunks=False).records:
                if hasattr(record, "profile") and header_profile is None:
                    header_profile = record.profile
                if isinstance(record, Schema):
                    schemas[record.id] = record
                elif isinstance(record, Channel):
                    channels[record.id] = record
                elif isinstance(record, Message):
                    ch = channels[record.channel_id]
                    schema = schemas[ch.schema_id]
                    if ch.id not in decoders:
                        decoders[ch.id] = DecoderFactory().decoder_for(ch.message_encoding, schema)
                    decoders[ch.id](record.data)
                    raw_messages.append((schema.name, record.data))
                    counts[ch.topic] += 1
                    data_bytes += len(record.data)
                    last_ns = max(last_ns, record.log_time)
        except (McapError, EOFError, ValueError) as e:
            stopped = f"{type(e).__name__}: {e}"
    check_profile(path, header_profile, schemas, channels)
    store = typestore_for({s.name: s.data.decode() for s in schemas.values()})
    for name, data in raw_messages:
        store.deserialize_cdr(data, name)
    return {
        "file": str(path),
        "messages": sum(counts.values()),
        "topics": dict(counts),
        "last_log_time_ns": last_ns,
        "data_bytes": data_bytes,
        "rosbags_messages": len(raw_messages),
        "stopped": stopped,
    }


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("full", "recover"):
        fail(__doc__)
    for path in sys.argv[2:]:
        out = full(path) if sys.argv[1] == "full" else recover(path)
        print(json.dumps(out))


if __name__ == "__main__":
    main()
