// Package crdvalidation proves, against a real API server, that the Loadout
// CRDs accept valid objects and reject invalid ones with human messages.
package crdvalidation
