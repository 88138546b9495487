package io.github.dblock.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link of the repository's Markdown pages (the README, {@code docs/},
 * the modules' READMEs and benchmark results) leads to a file that exists, and every
 * {@code #anchor} to a heading of its page, as GitHub names them.
 */
class DocumentationLinksTests {

	private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");

	private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.+?)\\s*#*\\s*$");

	@Test
	void everyRelativeLinkResolves() throws IOException {
		Path root = Path.of("").toAbsolutePath().getParent();
		List<Path> pages = pages(root);
		List<String> names = pages.stream().map((page) -> root.relativize(page).toString()).toList();
		assertThat(names).contains("README.md", "docs/getting-started.md", "docs/properties.md");
		List<String> broken = new ArrayList<>();
		int links = 0;
		for (Path page : pages) {
			for (String target : links(Files.readString(page))) {
				if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
					continue;
				}
				links++;
				String problem = problem(page, target);
				if (problem != null) {
					broken.add(root.relativize(page) + ": " + target + " (" + problem + ")");
				}
			}
		}
		assertThat(broken).as("broken links").isEmpty();
		assertThat(links).as("relative links checked").isGreaterThan(50);
	}

	@Test
	void anchorsAreNamedAsGitHubNamesThem() {
		assertThat(anchor("`@DbLock`")).isEqualTo("dblock");
		assertThat(anchor("What it does not guarantee")).isEqualTo("what-it-does-not-guarantee");
		assertThat(anchor("A Galera cluster (`DB_LOCK_BENCH_CURVES=galera`)"))
			.isEqualTo("a-galera-cluster-db_lock_bench_curvesgalera");
	}

	private static String problem(Path page, String target) throws IOException {
		int hash = target.indexOf('#');
		String file = (hash < 0) ? target : target.substring(0, hash);
		Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
		if (!Files.exists(resolved)) {
			return "no such file";
		}
		if (hash < 0) {
			return null;
		}
		if (!resolved.toString().endsWith(".md")) {
			return "an anchor into a file that is not Markdown";
		}
		return anchors(Files.readString(resolved)).contains(target.substring(hash + 1)) ? null : "no such heading";
	}

	private static List<Path> pages(Path root) throws IOException {
		try (Stream<Path> files = Files.walk(root)) {
			return files.filter((path) -> path.toString().endsWith(".md"))
				.filter((path) -> {
					String relative = root.relativize(path).toString();
					return !relative.startsWith(".") && !relative.contains("/target/") && !relative.startsWith("target/")
							&& !relative.contains("node_modules");
				})
				.sorted()
				.toList();
		}
	}

	/** The link targets of a page, outside fenced code blocks and code spans. */
	private static List<String> links(String markdown) {
		List<String> targets = new ArrayList<>();
		boolean fenced = false;
		for (String line : markdown.split("\n")) {
			if (line.strip().startsWith("```")) {
				fenced = !fenced;
				continue;
			}
			if (fenced) {
				continue;
			}
			Matcher link = LINK.matcher(line.replaceAll("`[^`]*`", "``"));
			while (link.find()) {
				targets.add(link.group(1));
			}
		}
		return targets;
	}

	/** The anchors of a page's headings, as GitHub derives them (with -1, -2 for repeats). */
	private static Set<String> anchors(String markdown) {
		Set<String> anchors = new HashSet<>();
		boolean fenced = false;
		for (String line : markdown.split("\n")) {
			if (line.strip().startsWith("```")) {
				fenced = !fenced;
				continue;
			}
			Matcher heading = HEADING.matcher(line);
			if (!fenced && heading.matches()) {
				String anchor = anchor(heading.group(1));
				String unique = anchor;
				for (int i = 1; !anchors.add(unique); i++) {
					unique = anchor + "-" + i;
				}
			}
		}
		return anchors;
	}

	private static String anchor(String heading) {
		String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").toLowerCase(Locale.ROOT);
		return text.replaceAll("[^\\p{L}\\p{N}\\s_-]", "").replace(' ', '-');
	}

}
