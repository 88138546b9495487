package io.github.dblock.benchmarks;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.zip.DataFormatException;

import org.HdrHistogram.Histogram;

/**
 * HdrHistogram helpers: the histograms every loop records into (nanoseconds, from 1 ns to
 * an hour, three significant digits: a few hundred kilobytes however many cycles run), their
 * percentiles in milliseconds, and their binary form for the worker processes.
 */
final class Latencies {

	/** The longest latency recorded: an hour. */
	private static final long HIGHEST_NANOS = 3_600_000_000_000L;

	private Latencies() {
	}

	/** An empty histogram of nanoseconds. */
	static Histogram nanos() {
		return new Histogram(1, HIGHEST_NANOS, 3);
	}

	/** An empty histogram of small counts (statements per acquisition). */
	static Histogram counts() {
		return new Histogram(1, 1_000_000, 3);
	}

	/** The p-th percentile (0..100) in milliseconds, NaN when empty. */
	static double millis(Histogram histogram, double percentile) {
		return (histogram.getTotalCount() == 0) ? Double.NaN : histogram.getValueAtPercentile(percentile) / 1e6;
	}

	static void write(Histogram histogram, DataOutputStream out) throws IOException {
		ByteBuffer buffer = ByteBuffer.allocate(histogram.getNeededByteBufferCapacity());
		int length = histogram.encodeIntoCompressedByteBuffer(buffer);
		out.writeInt(length);
		out.write(buffer.array(), 0, length);
	}

	static Histogram read(DataInputStream in) throws IOException {
		byte[] bytes = new byte[in.readInt()];
		in.readFully(bytes);
		try {
			return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(bytes), 0);
		}
		catch (DataFormatException ex) {
			throw new IOException("A worker's histogram could not be read", ex);
		}
	}

}
