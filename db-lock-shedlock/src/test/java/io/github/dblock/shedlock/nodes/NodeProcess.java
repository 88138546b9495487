package io.github.dblock.shedlock.nodes;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A node started as a JVM of its own with the test class path (as db-lock-autoconfigure's
 * node tests start theirs), and what it prints, read as it comes so that it never stalls
 * on a full pipe.
 */
final class NodeProcess {

	private final Process process;

	private final CompletableFuture<String> output = new CompletableFuture<>();

	private NodeProcess(Process process, String name) {
		this.process = process;
		Thread reader = new Thread(() -> {
			try {
				this.output.complete(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
			}
			catch (IOException ex) {
				this.output.completeExceptionally(ex);
			}
		}, "output of " + name);
		reader.setDaemon(true);
		reader.start();
	}

	/** Starts {@code main} with {@code args}. */
	static NodeProcess start(Class<?> main, String name, Object... args) throws IOException {
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), main.getName()));
		for (Object arg : args) {
			command.add(String.valueOf(arg));
		}
		return new NodeProcess(new ProcessBuilder(command).redirectErrorStream(true).start(), name);
	}

	/**
	 * Waits for the node to end, at most {@code timeout} (else it is destroyed), and returns
	 * what it printed.
	 * @throws AssertionError if it did not end in time or ended with a non-zero status
	 */
	String finish(Duration timeout) throws Exception {
		if (!this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
			this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			throw new AssertionError("node did not end within " + timeout + ":\n" + printed());
		}
		String printed = printed();
		if (this.process.exitValue() != 0) {
			throw new AssertionError("node ended with status " + this.process.exitValue() + ":\n" + printed);
		}
		return printed;
	}

	/** Ends the node if it still runs. */
	void destroy() {
		this.process.destroyForcibly();
	}

	private String printed() {
		try {
			return this.output.get(10, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			return "(output not read: " + ex + ")";
		}
	}

}
