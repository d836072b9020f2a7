// Package hardening proves what happens on every mistake a user can make and
// every fault a cluster can have: bad input, API server and manager restarts,
// write conflicts, tenancy and GitOps coexistence, against envtest with the
// manager running in process.
package hardening
