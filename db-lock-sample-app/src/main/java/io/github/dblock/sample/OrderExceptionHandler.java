package io.github.dblock.sample;

import io.github.dblock.LockAcquisitionException;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Turns the service's exceptions into problem details: a lock held by another request is a
 * 409 Conflict the client may retry, an unknown order a 404.
 */
@RestControllerAdvice
public class OrderExceptionHandler {

	/**
	 * Another request held the order's lock for the whole wait.
	 * @param ex the exception
	 * @return 409 Conflict with a {@code Retry-After} header
	 */
	@ExceptionHandler
	public ResponseEntity<ProblemDetail> lockHeld(LockAcquisitionException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT,
				"The order is being paid by another request; waited " + ex.getWaited().toMillis()
						+ " ms for it to finish. Retry to get the receipt.");
		problem.setTitle("Payment in progress");
		return ResponseEntity.status(HttpStatus.CONFLICT).header(HttpHeaders.RETRY_AFTER, "1").body(problem);
	}

	/**
	 * No such order.
	 * @param ex the exception
	 * @return 404 Not Found
	 */
	@ExceptionHandler
	public ProblemDetail orderNotFound(OrderNotFoundException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.NOT_FOUND, ex.getMessage());
		problem.setTitle("Order not found");
		return problem;
	}

}
