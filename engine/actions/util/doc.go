// Package util holds what several actions share: a priority queue ordered by session
// callbacks, and the node filtering, scoring and choosing steps of a placement.
package util
