// Package shard splits the cluster's namespaces between manager processes by a hash of their name, so each process owns, caches and writes one slice.
package shard
