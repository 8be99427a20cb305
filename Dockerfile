# The workloadspread manager image.
#   docker build -t workloadspread:0.1.0 .
# Stage 1 compiles the TypeScript (npm run build → dist/); stage 2 holds only dist/ and the
# production dependencies, runs as a non-root user and starts `workloadspread manager`.
# The source launcher (bin/workloadspread.js, through tsx) is not used here.

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /src/dist ./dist
# The numeric id matches the chart's runAsUser, so runAsNonRoot can be verified.
USER 65532:65532
EXPOSE 9443 8080 8081
ENTRYPOINT ["node", "dist/cli/entry.js", "manager"]
