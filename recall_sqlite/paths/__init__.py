"""Path code: from a directory to its workspace, worktree and branch, and the files the store
keeps beside itself. No SQL and no subprocess anywhere in this package.

resolve.py    path -> workspace root, worktree, branch (`resolve`, `Workspace`, `worktree_key`)
git.py        reading git's own files: `.git` pointers, linked worktrees, HEAD
idfile.py     the workspace id file (`<root>/.synapt/recall/workspace.json`)
datadir.py    the store's data directory: its place, privacy, trust, `.gitignore`
files.py      small-file reads and private, durable writes the modules above share
storefile.py  the store's files by their look: damage, moving aside, publishing whole;
              the file's life through an open (StoreFile)
"""
