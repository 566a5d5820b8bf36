"""The back-office: what the admin shows beyond one model's pages — the end users (there is
no user table), the dashboard on the admin's index, and the staff roles (docs/admin.md)."""
