// Package docs checks the project's Markdown against the tree it describes:
// every relative link and anchor resolves, and docs/architecture.md's package
// map names every product package and only packages that exist. It runs in
// `make test` (it is a plain go test), so a moved file or a new package
// without a row fails CI instead of leaving the docs quietly wrong.
package docs
