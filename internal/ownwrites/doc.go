// Package ownwrites remembers a controller's own writes, so that it can tell
// the watch events they cause from writes by anyone else without caching the
// objects' data.
package ownwrites
