// Package resources is Loadout's resolution engine: it turns ordered roots of
// skills, templates and instructions into one catalog, activates skills,
// renders templates and publishes the deterministic context ConfigMap data
// (docs/rules.md: catalog, activation, templates, context). It does no Kubernetes I/O, so the controller and the CLI share
// it byte for byte; the gatherers in this package only read directories or
// convert already-fetched objects.
package resources
