// Package materialize writes a published context as the files agents already
// read: an Agent Skills tree, Pi prompt templates, AGENTS.md and the system
// prompt, swapped in atomically through one symlink.
package materialize
