// Package ledgerexport sends hostd's decision ledger over OpenTelemetry
// (docs/hostd.md, "Decision ledger"): each record as an OTLP log whose body
// is the record's very line (so a collector's copy verifies with `loadout
// audit verify` like the file), and one span per tool call with a child span
// per hook that ran, timed as hostd waited for it. It is configured by the
// standard OTEL_EXPORTER_OTLP_* variables and speaks OTLP over HTTP
// (http/protobuf).
package ledgerexport
