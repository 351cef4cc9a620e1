//! The official JSON Schemas (vendored in `tests/schemas/`, see SOURCE.md).
#![allow(dead_code)]

use serde_json::Value;

fn load(name: &str) -> Value {
    let path = format!("{}/tests/schemas/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("schema file"))
        .expect("schema json")
}

fn check(schema_file: &str, what: &str, value: &Value) {
    let schema = load(schema_file);
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} violates {schema_file}: {errors:#?}\n{value:#}"
    );
}

/// Asserts a Connector Card is valid.
pub fn assert_card(card: &Value) {
    check("xagent.connector.v1.schema.json", "card", card);
}

/// Asserts a Connection Descriptor is valid.
pub fn assert_descriptor(d: &Value) {
    check("xagent.connection.v2.schema.json", "descriptor", d);
}

/// Asserts a packet envelope is valid, and any descriptor it carries.
pub fn assert_packet(p: &Value) {
    check("xagent.connector.packet.v1.schema.json", "packet", p);
    if let Some(d) = p.pointer("/payload/connection_descriptor") {
        assert_descriptor(d);
    }
}
