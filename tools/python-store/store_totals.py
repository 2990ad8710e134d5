"""Reads a protoprof store as any user of its layout would (docs/store.md),
with DuckDB or with Apache Spark (PySpark, local[2]), and prints JSON: each
sample type's total, per sample type asked for the top functions by flat
value (the leaf frame's function), and the samples' events (OTLP's
timestamps and the values paired with them): how many, their earliest and
latest time, and the sum of their values.

    store_totals.py duckdb|spark STORE LIMIT SAMPLE_TYPE...

Dictionary rows repeat across files (one per file and partition), so each
dictionary table is read through one row per id. SQL arrays are 1-based in
DuckDB; Spark's element_at reads the first.
"""
import json
import sys

TOP = """
WITH st AS (SELECT stack_id, {first}(location_ids) AS location_ids FROM {stacks} GROUP BY stack_id),
     l AS (SELECT location_id, {first}(lines) AS lines FROM {locations} GROUP BY location_id),
     f AS (SELECT function_id, {first}(name) AS name FROM {functions} GROUP BY function_id)
SELECT f.name AS name, sum(s.value) AS flat
FROM {samples} s
JOIN st ON st.stack_id = s.stack_id
JOIN l ON l.location_id = {leaf_location}
JOIN f ON f.function_id = {leaf_line}.function_id
WHERE s.sample_type = ?
GROUP BY f.name ORDER BY flat DESC, name LIMIT {limit}
"""
TOTALS = "SELECT sample_type, sum(value) AS total FROM {samples} GROUP BY sample_type"
EVENTS = """
SELECT (SELECT count(*) FROM (SELECT {unnest}(timestamps_unix_nano) AS t FROM {samples})),
       (SELECT min(t) FROM (SELECT {unnest}(timestamps_unix_nano) AS t FROM {samples})),
       (SELECT max(t) FROM (SELECT {unnest}(timestamps_unix_nano) AS t FROM {samples})),
       (SELECT sum(v) FROM (SELECT {unnest}(event_values) AS v FROM {samples}))
"""
TABLES = ["samples", "stacks", "locations", "functions"]


def duckdb_answers(store, limit, types):
    import duckdb

    con = duckdb.connect()
    names = {t: f"read_parquet('{store}/{t}/**/*.parquet', hive_partitioning = true)" for t in TABLES}
    totals = con.execute(TOTALS.format(**names)).fetchall()
    query = TOP.format(
        first="any_value", leaf_location="st.location_ids[1]", leaf_line="l.lines[1]",
        limit=int(limit), **names,
    )
    tops = {t: con.execute(query, [t]).fetchall() for t in types}
    events = con.execute(EVENTS.format(unnest="unnest", **names)).fetchone()
    return totals, tops, events


def spark_answers(store, limit, types):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("protoprof-store-check")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    for table in TABLES:
        spark.read.parquet(f"{store}/{table}").createOrReplaceTempView(table)
    names = {t: t for t in TABLES}
    totals = [(r[0], r[1]) for r in spark.sql(TOTALS.format(**names)).collect()]
    query = TOP.format(
        first="first", leaf_location="element_at(st.location_ids, 1)",
        leaf_line="element_at(l.lines, 1)", limit=int(limit), **names,
    )
    tops = {t: [(r[0], r[1]) for r in spark.sql(query, args=[t]).collect()] for t in types}
    events = tuple(spark.sql(EVENTS.format(unnest="explode", **names)).collect()[0])
    spark.stop()
    return totals, tops, events


def main():
    engine, store, limit, types = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    answers = duckdb_answers if engine == "duckdb" else spark_answers
    totals, tops, events = answers(store, limit, types)
    print(json.dumps({
        "totals": {t: int(v) for t, v in totals},
        "top": {t: [[n, int(v)] for n, v in rows] for t, rows in tops.items()},
        "events": [None if v is None else int(v) for v in events],
    }))


if __name__ == "__main__":
    main()
