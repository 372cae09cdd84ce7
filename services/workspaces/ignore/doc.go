// Package ignore matches paths against gitignore rules the way ripgrep does
// by default: the .gitignore, .ignore and .rgignore files of every directory
// from the filesystem root down, plus .git/info/exclude of the enclosing
// repository, the deepest deciding rule winning.
//
//	chain := ignore.ParentChain(root)   // rules from above root
//	walk(dir):
//	    chain = chain.WithDir(dir)      // add dir's own ignore files
//	    chain.Ignored(path, isDir)      // excluded?
//
// Callers walk the tree themselves; the package reads only ignore files.
// Not supported: git's global excludes file (core.excludesFile) and
// negations that re-include a path under an ignored directory (git does not
// either).
package ignore
