"""The cassandra-driver peer of `ringwise token --type`.

Usage: python cassandra_types.py < LINES

Each line is TYPES<TAB>SEP<TAB>KEY: TYPES a comma-separated list of CQL
types, KEY a CQL literal per type (split at SEP when there are several).
Each literal is read into a Python value by Python's own parsers (int,
decimal.Decimal, float, uuid.UUID, datetime, bytes.fromhex), serialised by
the driver's own serialiser of the type (cassandra.cqltypes ... .serialize,
protocol v4), the columns joined into a routing key by the driver's own
Statement.routing_key (its composite packing), and the token printed is
cassandra.metadata.Murmur3Token.from_key(routing_key).value, one a line.

Nothing here serialises bytes by hand: the point is that the driver does.
"""

import datetime
import decimal
import re
import sys
import uuid

from cassandra import cqltypes
from cassandra.metadata import Murmur3Token
from cassandra.query import SimpleStatement

PROTOCOL = 4

SERIALISERS = {
    "tinyint": cqltypes.ByteType,
    "smallint": cqltypes.ShortType,
    "int": cqltypes.Int32Type,
    "bigint": cqltypes.LongType,
    "varint": cqltypes.IntegerType,
    "decimal": cqltypes.DecimalType,
    "float": cqltypes.FloatType,
    "double": cqltypes.DoubleType,
    "boolean": cqltypes.BooleanType,
    "text": cqltypes.UTF8Type,
    "varchar": cqltypes.VarcharType,
    "ascii": cqltypes.AsciiType,
    "blob": cqltypes.BytesType,
    "uuid": cqltypes.UUIDType,
    "timeuuid": cqltypes.TimeUUIDType,
    "date": cqltypes.SimpleDateType,
    "timestamp": cqltypes.DateType,
    "inet": cqltypes.InetAddressType,
}

RAW = re.compile(r"^-?[0-9]+$")
DATE_ZONE = re.compile(r"^([0-9]{4}-[0-9]{2}-[0-9]{2}) ?(Z|[+-][0-9]{2}(:?[0-9]{2})?)$")
SPACE_ZONE = re.compile(r" (Z|[+-][0-9]{2}(:?[0-9]{2})?)$")


def unquote(literal):
    if len(literal) >= 2 and literal[0] == "'" and literal[-1] == "'":
        return literal[1:-1]
    return literal


def value(cql_type, literal):
    """The Python value the driver serialises for `literal`."""
    if cql_type in ("text", "varchar", "ascii"):
        return literal
    if cql_type == "blob":
        return bytes.fromhex(literal[2:] if literal[:2].lower() == "0x" else literal)
    literal = unquote(literal)
    if cql_type in ("tinyint", "smallint", "int", "bigint", "varint"):
        return int(literal)
    if cql_type == "decimal":
        return decimal.Decimal(literal)
    if cql_type in ("float", "double"):
        return float(literal)
    if cql_type == "boolean":
        return {"true": True, "false": False}[literal.lower()]
    if cql_type in ("uuid", "timeuuid"):
        return uuid.UUID(literal)
    if cql_type == "inet":
        return literal
    if cql_type == "date":
        # The driver takes an int as the raw (2^31-offset) day number.
        return int(literal) if RAW.match(literal) else datetime.date.fromisoformat(literal)
    if cql_type == "timestamp":
        if RAW.match(literal):
            return int(literal)
        date_zone = DATE_ZONE.match(literal)
        if date_zone:
            literal = f"{date_zone.group(1)}T00:00{date_zone.group(2)}"
        parsed = datetime.datetime.fromisoformat(SPACE_ZONE.sub(r"\1", literal))
        if parsed.tzinfo is None:
            sys.exit(f"a timestamp without a zone reached the peer: {literal!r}")
        return parsed
    sys.exit(f"unknown type {cql_type!r}")


def main():
    out = []
    for line in sys.stdin.read().split("\n"):
        if not line:
            continue
        types, sep, key = line.split("\t")
        types = types.split(",")
        literals = key.split(sep) if len(types) > 1 else [key]
        if len(literals) != len(types):
            sys.exit(f"{key!r}: {len(literals)} literals for {len(types)} types")
        parts = [
            SERIALISERS[t].serialize(value(t, literal), PROTOCOL)
            for t, literal in zip(types, literals)
        ]
        statement = SimpleStatement("")
        # The property's setter packs several parts as a composite key.
        statement.routing_key = parts
        routing_key = statement.routing_key
        out.append(str(Murmur3Token.from_key(routing_key).value))
    sys.stdout.write("".join(f"{token}\n" for token in out))


main()
