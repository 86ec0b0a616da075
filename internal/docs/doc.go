// Package docs holds the checks of the repository's Markdown documents:
// every relative link resolves inside the repository.
package docs
