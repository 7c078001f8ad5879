"""mkdocs hook (mkdocs.yml `hooks:`): links from a guide page to repository files outside
docs/ (../bench/RESULTS.md, ../examples/saxpy.cpp) work on GitHub, where the guide is read in
the repository, but name nothing in the site. On the site they become the file's repository
path in code type, so `mkdocs build --strict` stays free of warnings while both readings keep
their reference. tests/docs/check_links.py checks that each such file exists."""
import posixpath
import re

LINK = re.compile(r"(?<!!)\[([^\]]+)\]\((\.\./[^)#\s]+)(#[^)\s]*)?\)")


def on_page_markdown(markdown, page, config, files):
    base = posixpath.dirname(page.file.src_uri)

    def plain(m):
        target = posixpath.normpath(posixpath.join("docs", base, m.group(2)))
        if target.startswith("docs/"):
            return m.group(0)  # inside the guide: mkdocs resolves and checks it
        text = m.group(1)
        return text if text.strip("`") == target else f"{text} (`{target}`)"

    return LINK.sub(plain, markdown)
