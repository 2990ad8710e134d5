"""Reads a protoprof store with DuckDB, as any user of the layout would
(docs/store.md), and prints JSON: each sample type's total, and the top
functions by flat value (the leaf frame's function) of one sample type.

    store_totals.py STORE SAMPLE_TYPE [LIMIT]
"""
import json
import sys

import duckdb


def main():
    store, sample_type = sys.argv[1], sys.argv[2]
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    con = duckdb.connect()
    table = lambda name: f"read_parquet('{store}/{name}/**/*.parquet', hive_partitioning = true)"
    totals = con.execute(
        f"SELECT sample_type, sum(value) FROM {table('samples')} GROUP BY sample_type ORDER BY sample_type"
    ).fetchall()
    top = con.execute(
        f"""
        WITH stacks AS (SELECT stack_id, any_value(location_ids) AS location_ids
                        FROM {table('stacks')} GROUP BY stack_id),
             locations AS (SELECT location_id, any_value(lines) AS lines
                           FROM {table('locations')} GROUP BY location_id),
             functions AS (SELECT function_id, any_value(name) AS name
                           FROM {table('functions')} GROUP BY function_id)
        SELECT f.name, sum(s.value) AS flat
        FROM {table('samples')} s
        JOIN stacks st ON st.stack_id = s.stack_id
        JOIN locations l ON l.location_id = st.location_ids[1]
        JOIN functions f ON f.function_id = l.lines[1].function_id
        WHERE s.sample_type = ?
        GROUP BY f.name ORDER BY flat DESC, f.name LIMIT ?
        """,
        [sample_type, limit],
    ).fetchall()
    print(json.dumps({"totals": {t: int(v) for t, v in totals}, "top": [[n, int(v)] for n, v in top]}))


if __name__ == "__main__":
    main()
