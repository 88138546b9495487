package io.github.dblock.jdbc.dialect;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The SHA-256 digests that name keys' advisory and named locks, copied from one digest. */
class SqlSyntaxDigestTests {

	@Test
	void eachDigestIsTheTextsOwnWhateverWasDigestedBefore() throws Exception {
		for (String text : List.of("a", "orders:42", "", "a".repeat(1000), "a")) {
			assertThat(SqlSyntax.sha256(text)).isEqualTo(reference(text));
		}
	}

	@Test
	void threadsDigestingAtOnceEachGetTheirTextsDigest() throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			List<Future<Boolean>> results = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				int thread = t;
				Callable<Boolean> digests = () -> {
					for (int i = 0; i < 2_000; i++) {
						String text = "key-" + thread + "-" + i;
						if (!Arrays.equals(SqlSyntax.sha256(text), reference(text))) {
							return false;
						}
					}
					return true;
				};
				results.add(threads.submit(digests));
			}
			for (Future<Boolean> result : results) {
				assertThat(result.get()).isTrue();
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	private static byte[] reference(String text) throws Exception {
		return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
	}

}
