"""Reading an error (scarguard.naming.classify): its text, exception types and status code."""

from __future__ import annotations

from scarguard.naming.classify import error_parts


class RateLimitError(ConnectionError):
    """An SDK's error that carries its status code."""

    status_code = 429


class _Response:
    status_code = 503


class HTTPError(Exception):
    """An error that carries the response it got."""

    response = _Response()


def test_text_passes_through_with_no_types_or_status() -> None:
    """A string (or nothing) is the text as is."""
    assert error_parts("No such file: a.py") == ("No such file: a.py", (), None)
    assert error_parts(None) == (None, (), None)


def test_an_exception_reads_as_its_type_and_message_with_its_classes() -> None:
    """Type name and message; class names most specific first, without object/BaseException."""
    text, kinds, status = error_parts(FileNotFoundError(2, "No such file", "a.py"))
    assert text == "FileNotFoundError: [Errno 2] No such file: 'a.py'"
    assert kinds == ("FileNotFoundError", "OSError", "Exception")
    assert status is None


def test_a_status_code_is_read_from_the_error_or_its_response() -> None:
    """``.status_code`` or ``.response.status_code``, whichever the SDK uses."""
    assert error_parts(RateLimitError("slow down"))[2] == 429
    assert error_parts(RateLimitError("slow down"))[1][:2] == ("RateLimitError", "ConnectionError")
    assert error_parts(HTTPError("bad gateway"))[2] == 503


def test_a_status_that_is_not_an_integer_is_ignored() -> None:
    """A status code of another type says nothing the bank could match."""
    error = ValueError("x")
    error.status_code = "429"  # type: ignore[attr-defined]
    assert error_parts(error)[2] is None


def test_an_exception_without_a_message_or_that_cannot_print_is_its_type() -> None:
    """An empty message, or a __str__ that raises, leaves the type name as the text."""

    class Broken(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert error_parts(TimeoutError())[0] == "TimeoutError"
    assert error_parts(Broken())[0] == "Broken"
