"""No models: the back-office reads and acts through the other apps' selectors and services.
(The module exists so that post_migrate is sent for this app: roles.py's sync.)"""
