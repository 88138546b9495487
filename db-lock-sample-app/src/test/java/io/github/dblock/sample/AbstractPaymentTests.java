package io.github.dblock.sample;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockHandle;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.http.HttpHeaders;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.web.servlet.client.EntityExchangeResult;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample app's behaviour over HTTP, against a running server and a real database:
 * concurrent payments of one order charge it once, payments of different orders do not wait
 * for each other. A subclass per database supplies the configuration.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@AutoConfigureRestTestClient
abstract class AbstractPaymentTests {

	/** Requests fired at once at the same order, as an impatient user's clicks. */
	private static final int CLICKS = 8;

	// ids above the seeded orders, reset before each test: on a shared database other runs leave rows behind
	private static final long ORDER = 1001;

	private static final long OTHER_ORDER = 1002;

	private static final String CONFLICT_DETAIL = "being paid by another request";

	@Autowired
	private RestTestClient client;

	@Autowired
	private JdbcClient jdbc;

	@Autowired
	private DbLockTemplate locks;

	@Autowired
	private OrderRepository orders;

	@Autowired
	private JsonMapper json;

	@BeforeEach
	void unpaidOrders() {
		this.jdbc.sql("DELETE FROM sample_orders WHERE id IN (?, ?)").params(ORDER, OTHER_ORDER).update();
		insertUnpaidOrder(ORDER, new BigDecimal("42.00"));
		insertUnpaidOrder(OTHER_ORDER, new BigDecimal("13.50"));
	}

	@Test
	void aWriteWithAnOlderFencingTokenThanTheLastWritersIsRefused() {
		assertThat(this.orders.markPaid(ORDER, "pay-newer", 20)).isTrue();
		// a holder whose lease ended during a stall, with the smaller token of its older lock
		assertThat(this.orders.markPaid(ORDER, "pay-older", 10)).isFalse();
		assertThat(order(ORDER).paymentRef()).isEqualTo("pay-newer");
		assertThat(order(ORDER).chargeCount()).isEqualTo(1);
	}

	@Test
	void concurrentPaymentsOfOneOrderChargeItOnce() throws Exception {
		List<Callable<Response>> clicks = Collections.nCopies(CLICKS, () -> pay(ORDER));

		List<Response> responses = concurrently(clicks);

		Order order = order(ORDER);
		assertThat(order.status()).isEqualTo(OrderStatus.PAID);
		assertThat(order.chargeCount()).isEqualTo(1);
		Receipt expected = new Receipt(ORDER, order.amount(), order.paymentRef());
		assertThat(responses).hasSize(CLICKS).allSatisfy((response) -> {
			if (response.status() == 200) {
				assertThat(receipt(response)).isEqualTo(expected);
			}
			else {
				assertThat(response.status()).as("neither a receipt nor a conflict: %s", response).isEqualTo(409);
				assertThat(response.body()).contains(CONFLICT_DETAIL);
			}
		});
		assertThat(responses).anySatisfy((response) -> assertThat(response.status()).isEqualTo(200));
	}

	@Test
	void paymentsOfDifferentOrdersBothSucceedInParallel() throws Exception {
		List<Response> responses = concurrently(List.of(() -> pay(ORDER), () -> pay(OTHER_ORDER)));

		assertThat(responses).extracting(Response::status).containsExactly(200, 200);
		assertThat(receipt(responses.get(0)).orderId()).isEqualTo(ORDER);
		assertThat(receipt(responses.get(1)).orderId()).isEqualTo(OTHER_ORDER);
		assertThat(List.of(order(ORDER), order(OTHER_ORDER))).allSatisfy((order) -> {
			assertThat(order.status()).isEqualTo(OrderStatus.PAID);
			assertThat(order.chargeCount()).isEqualTo(1);
		});
	}

	@Test
	void orderLockedElsewhereGetsConflictWhileOtherOrdersArePaid() {
		// another instance of the app paying ORDER holds this key: [key-prefix:]name:key
		try (LockHandle held = this.locks.acquire("PaymentService.pay:" + ORDER, Duration.ZERO, null)) {
			Response other = pay(OTHER_ORDER);
			Response blocked = pay(ORDER);

			assertThat(other.status()).isEqualTo(200);
			assertThat(blocked.status()).isEqualTo(409);
			assertThat(blocked.body()).contains(CONFLICT_DETAIL);
			assertThat(blocked.headers().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("1");
			assertThat(order(ORDER).chargeCount()).isZero();
		}
		Response retried = pay(ORDER);

		assertThat(retried.status()).isEqualTo(200);
		assertThat(order(ORDER).chargeCount()).isEqualTo(1);
	}

	@Test
	void payingAgainReturnsTheSameReceipt() {
		Receipt first = receipt(pay(ORDER));
		Receipt second = receipt(pay(ORDER));

		assertThat(second).isEqualTo(first);
		assertThat(first.paymentRef()).isNotBlank();
		assertThat(order(ORDER).chargeCount()).isEqualTo(1);
	}

	@Test
	void actuatorShowsTheLocksHeldTheHealthAndTheMeters() {
		assertThat(pay(ORDER).status()).isEqualTo(200);
		try (LockHandle held = this.locks.acquire("PaymentService.pay:" + OTHER_ORDER, Duration.ZERO, null)) {
			String locks = get("/actuator/dblock");
			assertThat(locks).contains("sample:PaymentService.pay:" + OTHER_ORDER).contains("\"heldHere\"");
		}
		assertThat(get("/actuator/health")).contains("\"dbLock\"").contains("\"UP\"");
		String acquisitions = get("/actuator/metrics/db.lock.acquire");
		assertThat(acquisitions).contains("\"outcome\"").contains("acquired").contains("PaymentService.pay");
	}

	@Test
	void theListShowsTheOrdersWithTheirCharges() {
		assertThat(pay(ORDER).status()).isEqualTo(200);
		String list = get("/orders");
		assertThat(list).contains("\"id\":" + ORDER).contains("\"id\":" + OTHER_ORDER).contains("\"chargeCount\":1");
	}

	@Test
	void unknownOrderIsNotFound() {
		Response response = pay(999_999);

		assertThat(response.status()).isEqualTo(404);
		assertThat(response.body()).contains("Order 999999 does not exist");
	}

	@Test
	void everyErrorIsAProblemDetail() {
		EntityExchangeResult<String> badId = this.client.get().uri("/orders/not-a-number").exchange()
			.returnResult(String.class);
		assertThat(badId.getStatus().value()).isEqualTo(400);
		assertThat(badId.getResponseHeaders().getContentType()).hasToString("application/problem+json");
		assertThat(pay(999_999).headers().getContentType()).hasToString("application/problem+json");
	}

	private Response pay(long orderId) {
		EntityExchangeResult<String> result = this.client.post()
			.uri("/orders/{id}/pay", orderId)
			.exchange()
			.returnResult(String.class);
		String body = result.getResponseBody();
		return new Response(result.getStatus().value(), (body != null) ? body : "", result.getResponseHeaders());
	}

	private String get(String path) {
		EntityExchangeResult<String> result = this.client.get().uri(path).exchange().returnResult(String.class);
		assertThat(result.getStatus().value()).as("GET %s", path).isEqualTo(200);
		return (result.getResponseBody() != null) ? result.getResponseBody() : "";
	}

	private Order order(long orderId) {
		Order order = this.client.get().uri("/orders/{id}", orderId).exchange().returnResult(Order.class).getResponseBody();
		assertThat(order).isNotNull();
		return order;
	}

	private Receipt receipt(Response response) {
		assertThat(response.status()).as("status of %s", response).isEqualTo(200);
		return this.json.readValue(response.body(), Receipt.class);
	}

	private void insertUnpaidOrder(long id, BigDecimal amount) {
		this.jdbc.sql("INSERT INTO sample_orders (id, amount, status, charge_count) VALUES (?, ?, 'UNPAID', 0)")
			.params(id, amount)
			.update();
	}

	/** Runs the tasks on threads of their own, released together once every thread is ready. */
	private static <T> List<T> concurrently(List<Callable<T>> tasks) throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(tasks.size());
		try {
			CountDownLatch ready = new CountDownLatch(tasks.size());
			CountDownLatch start = new CountDownLatch(1);
			List<Future<T>> futures = new ArrayList<>();
			for (Callable<T> task : tasks) {
				futures.add(threads.submit(() -> {
					ready.countDown();
					start.await();
					return task.call();
				}));
			}
			ready.await();
			start.countDown();
			List<T> results = new ArrayList<>();
			for (Future<T> future : futures) {
				results.add(future.get());
			}
			return results;
		}
		finally {
			threads.shutdownNow();
		}
	}

	private record Response(int status, String body, HttpHeaders headers) {
	}

}
