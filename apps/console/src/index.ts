/** idem's operator console: see README.md. */
export {};
