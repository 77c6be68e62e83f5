import { defineConfig } from "drizzle-kit";

/** The PostgreSQL journal's migrations (`npm run db:generate:pg`), apart from SQLite's. */
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/postgres/tables.ts",
  out: "./migrations-pg",
});
