//! The tables of a store and their Arrow schemas: the public contract
//! docs/store.md states. Ids are 16-byte content hashes (`ids.rs`);
//! addresses and offsets are unsigned 64-bit, as in pprof.

use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};

/// The tables, each a directory of the store.
pub const TABLES: [&str; 6] = [SAMPLES, PROFILES, STACKS, LOCATIONS, FUNCTIONS, MAPPINGS];
/// One row per sample and sample type.
pub const SAMPLES: &str = "samples";
/// One row per profile: what a profile says beside its samples.
pub const PROFILES: &str = "profiles";
/// One row per distinct stack.
pub const STACKS: &str = "stacks";
/// One row per distinct location.
pub const LOCATIONS: &str = "locations";
/// One row per distinct function.
pub const FUNCTIONS: &str = "functions";
/// One row per distinct mapping.
pub const MAPPINGS: &str = "mappings";

/// The resource attributes that have columns of their own in `samples`
/// (the rest go in its `resource_attributes` map): (attribute, column).
pub const RESOURCE_COLUMNS: [(&str, &str); 8] = [
    ("service.version", "service_version"),
    ("host.name", "host_name"),
    ("deployment.environment", "deployment_environment"),
    ("k8s.cluster.name", "k8s_cluster_name"),
    ("k8s.namespace.name", "k8s_namespace_name"),
    ("k8s.pod.name", "k8s_pod_name"),
    ("k8s.container.name", "k8s_container_name"),
    ("k8s.node.name", "k8s_node_name"),
];

/// The partition columns of every table, from the directory names
/// (`dt=2026-11-27/hour=05/service=checkout`).
pub const PARTITIONS: [&str; 3] = ["dt", "hour", "service"];

/// A 16-byte id.
pub fn id_type() -> DataType {
    DataType::FixedSizeBinary(16)
}

fn field(name: &str, data_type: DataType, nullable: bool) -> Field {
    Field::new(name, data_type, nullable)
}

/// A map of strings to strings (Arrow's and Parquet's MAP).
pub fn string_map() -> DataType {
    let entries = Fields::from(vec![
        field("key", DataType::Utf8, false),
        field("value", DataType::Utf8, true),
    ]);
    DataType::Map(
        Arc::new(field("entries", DataType::Struct(entries), false)),
        false,
    )
}

/// The fields of a numeric label: key, value, unit.
pub fn numeric_label_fields() -> Fields {
    Fields::from(vec![
        field("key", DataType::Utf8, false),
        field("value", DataType::Int64, false),
        field("unit", DataType::Utf8, true),
    ])
}

/// The fields of a string label whose key repeats in its sample.
pub fn label_fields() -> Fields {
    Fields::from(vec![
        field("key", DataType::Utf8, false),
        field("value", DataType::Utf8, false),
    ])
}

/// The fields of one line of a location.
pub fn line_fields() -> Fields {
    Fields::from(vec![
        field("function_id", id_type(), true),
        field("line", DataType::Int64, false),
        field("column", DataType::Int64, false),
    ])
}

/// The fields of one sample type.
pub fn value_type_fields() -> Fields {
    Fields::from(vec![
        field("type", DataType::Utf8, false),
        field("unit", DataType::Utf8, false),
    ])
}

fn list_of(fields: Fields) -> DataType {
    DataType::List(Arc::new(field("item", DataType::Struct(fields), true)))
}

fn list_of_type(data_type: DataType) -> DataType {
    DataType::List(Arc::new(field("item", data_type, true)))
}

static SAMPLES_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let mut fields = vec![
        field("time_unix_nano", DataType::Int64, false),
        // Nullable: files written before it was added read it as null,
        // and their time_unix_nano was the profile's start.
        field("profile_time_unix_nano", DataType::Int64, true),
        field("profile_id", id_type(), false),
        field("service_name", DataType::Utf8, false),
        field("sample_type", DataType::Utf8, false),
        field("sample_unit", DataType::Utf8, false),
        field("period_type", DataType::Utf8, false),
        field("period_unit", DataType::Utf8, false),
        field("period", DataType::Int64, false),
        field("stack_id", id_type(), false),
        field("value", DataType::Int64, false),
        field("sample_index", DataType::Int64, false),
    ];
    for (_, column) in RESOURCE_COLUMNS {
        fields.push(field(column, DataType::Utf8, true));
    }
    fields.extend([
        field("resource_attributes", string_map(), true),
        field("labels", string_map(), true),
        field("repeated_labels", list_of(label_fields()), true),
        field("numeric_labels", list_of(numeric_label_fields()), true),
        field("label_set_id", id_type(), false),
        field("trace_id", DataType::FixedSizeBinary(16), true),
        field("span_id", DataType::FixedSizeBinary(8), true),
        field("timestamps_unix_nano", list_of_type(DataType::Int64), true),
        field("event_values", list_of_type(DataType::Int64), true),
    ]);
    Arc::new(Schema::new(fields))
});

static PROFILES_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field("profile_id", id_type(), false),
        field("time_unix_nano", DataType::Int64, false),
        field("duration_nano", DataType::Int64, false),
        field("service_name", DataType::Utf8, false),
        field("sample_types", list_of(value_type_fields()), false),
        field("period_type", DataType::Utf8, false),
        field("period_unit", DataType::Utf8, false),
        field("period", DataType::Int64, false),
        field("default_sample_type", DataType::Utf8, false),
        field("comments", list_of_type(DataType::Utf8), false),
        field("drop_frames", DataType::Utf8, false),
        field("keep_frames", DataType::Utf8, false),
        field("doc_url", DataType::Utf8, false),
        field("resource_attributes", string_map(), true),
        field("sample_count", DataType::Int64, false),
        field("main_mapping_id", id_type(), true),
    ]))
});

static STACKS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field("stack_id", id_type(), false),
        field("location_ids", list_of_type(id_type()), false),
    ]))
});

static LOCATIONS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field("location_id", id_type(), false),
        field("mapping_id", id_type(), true),
        field("address", DataType::UInt64, false),
        field("lines", list_of(line_fields()), false),
        field("is_folded", DataType::Boolean, false),
    ]))
});

static FUNCTIONS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field("function_id", id_type(), false),
        field("name", DataType::Utf8, false),
        field("system_name", DataType::Utf8, false),
        field("filename", DataType::Utf8, false),
        field("start_line", DataType::Int64, false),
    ]))
});

static MAPPINGS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field("mapping_id", id_type(), false),
        field("memory_start", DataType::UInt64, false),
        field("memory_limit", DataType::UInt64, false),
        field("file_offset", DataType::UInt64, false),
        field("filename", DataType::Utf8, false),
        field("build_id", DataType::Utf8, false),
        field("has_functions", DataType::Boolean, false),
        field("has_filenames", DataType::Boolean, false),
        field("has_line_numbers", DataType::Boolean, false),
        field("has_inline_frames", DataType::Boolean, false),
    ]))
});

/// The schema of `table`'s files (without the partition columns).
pub fn schema_of(table: &str) -> SchemaRef {
    match table {
        SAMPLES => SAMPLES_SCHEMA.clone(),
        PROFILES => PROFILES_SCHEMA.clone(),
        STACKS => STACKS_SCHEMA.clone(),
        LOCATIONS => LOCATIONS_SCHEMA.clone(),
        FUNCTIONS => FUNCTIONS_SCHEMA.clone(),
        MAPPINGS => MAPPINGS_SCHEMA.clone(),
        other => panic!("no table {other}"),
    }
}
