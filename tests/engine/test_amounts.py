"""Byte counts in words, the one helper of the report, the HTML page, the progress bar and the
input-memory limit."""

from surgeon.reportfields import bytes_text


def test_units_step_at_1024_whole_bytes_then_one_decimal():
    assert [bytes_text(n) for n in (0, 1023, 1024, 1536, 5 * 2**20, 3 * 2**30)] == [
        "0 B", "1023 B", "1.0 KB", "1.5 KB", "5.0 MB", "3.0 GB"]
    assert bytes_text(4 * 2**40) == "4096.0 GB"  # GB is the largest unit


def test_iec_names_for_memory_and_a_sign_for_what_a_rewrite_adds():
    assert bytes_text(12 * 2**30, iec=True) == "12.0 GiB" and bytes_text(2048, iec=True) == "2.0 KiB"
    assert bytes_text(-2048) == "-2.0 KB" and bytes_text(-10) == "-10 B"
