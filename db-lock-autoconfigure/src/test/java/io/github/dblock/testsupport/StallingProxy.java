package io.github.dblock.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariConfig;

/**
 * A TCP proxy on loopback in front of a database, whose traffic a test can stall (bytes
 * stop flowing both ways, connections stay open, as with a network that drops packets)
 * and resume. New connections are accepted while stalled, but get no reply.
 */
public final class StallingProxy implements AutoCloseable {

	private final ServerSocket server;

	private final String targetHost;

	private final int targetPort;

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private volatile boolean stalled;

	/** Only the replies stalled: what the clients send still reaches the database. */
	private volatile boolean repliesStalled;

	private volatile boolean closed;

	/**
	 * Starts a proxy on a free port.
	 * @param targetHost the database's host
	 * @param targetPort the database's port
	 * @throws IOException if no port can be bound
	 */
	public StallingProxy(String targetHost, int targetPort) throws IOException {
		this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		this.targetHost = targetHost;
		this.targetPort = targetPort;
		daemon(this::accept, "proxy-accept");
	}

	/**
	 * Starts a proxy in front of a test database's server.
	 * @param database the database's connection settings
	 * @return the proxy
	 * @throws IOException if no port can be bound
	 */
	public static StallingProxy before(TestDatabase.Connection database) throws IOException {
		URI target = target(database);
		int port = (target.getPort() != -1) ? target.getPort() : ("postgresql".equals(target.getScheme()) ? 5432 : 3306);
		return new StallingProxy(target.getHost(), port);
	}

	/**
	 * The JDBC URL of a test database through this proxy.
	 * @param database the database's connection settings
	 * @return the URL
	 */
	public String url(TestDatabase.Connection database) {
		return database.url().replace("//" + target(database).getRawAuthority() + "/", "//127.0.0.1:" + port() + "/");
	}

	/**
	 * A pool's configuration for a test database through this proxy.
	 * @param database the database's connection settings
	 * @param poolSize the pool's size
	 * @return the configuration, to complete
	 */
	public HikariConfig poolConfig(TestDatabase.Connection database, int poolSize) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url(database));
		config.setUsername(database.user());
		config.setPassword(database.password());
		config.setMaximumPoolSize(poolSize);
		return config;
	}

	private static URI target(TestDatabase.Connection database) {
		return URI.create(database.url().substring("jdbc:".length()));
	}

	/** The port clients connect to. */
	public int port() {
		return this.server.getLocalPort();
	}

	/** Stops every byte in both directions until {@link #resume()}. */
	public void stall() {
		this.stalled = true;
	}

	/**
	 * Stops the database's replies only: statements sent still reach it and run, but their
	 * clients hear nothing, as when a reply is lost.
	 */
	public void stallReplies() {
		this.repliesStalled = true;
	}

	/** Lets the held traffic flow again. */
	public void resume() {
		this.stalled = false;
		this.repliesStalled = false;
	}

	@Override
	public void close() throws IOException {
		this.closed = true;
		this.stalled = false;
		this.repliesStalled = false;
		this.server.close();
		for (Socket socket : this.sockets) {
			socket.close();
		}
	}

	private void accept() {
		while (!this.closed) {
			try {
				Socket client = this.server.accept();
				Socket target = new Socket(this.targetHost, this.targetPort);
				this.sockets.add(client);
				this.sockets.add(target);
				daemon(() -> pump(client, target, false), "proxy-up");
				daemon(() -> pump(target, client, true), "proxy-down");
			}
			catch (IOException ex) {
				// closed, or one connection failed: go on with the others
			}
		}
	}

	private void pump(Socket from, Socket to, boolean replies) {
		byte[] buffer = new byte[16384];
		try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
			while (true) {
				awaitFlowing(replies);
				int read = in.read(buffer);
				if (read < 0) {
					break;
				}
				// bytes read just before a stall are held too
				awaitFlowing(replies);
				out.write(buffer, 0, read);
				out.flush();
			}
		}
		catch (IOException ex) {
			// one side closed
		}
		finally {
			closeQuietly(from);
			closeQuietly(to);
		}
	}

	private void awaitFlowing(boolean replies) {
		while ((this.stalled || (replies && this.repliesStalled)) && !this.closed) {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
		}
	}

	private static void closeQuietly(Socket socket) {
		try {
			socket.close();
		}
		catch (IOException ex) {
			// closing anyway
		}
	}

	private static void daemon(Runnable task, String name) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		thread.start();
	}

}
