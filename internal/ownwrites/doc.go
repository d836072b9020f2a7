// Package ownwrites remembers the controller's own writes of context ConfigMaps and Workspace statuses, so that it can tell
// the watch events they cause from writes by anyone else without caching the
// objects' data.
package ownwrites
